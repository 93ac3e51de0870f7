"""The lane run contract (``trigger-contract.v1``) and its verify."""
