"""Every user-visible text of SPEC, verbatim, as a constant or a formatter.

Tests pin each one; nothing else in tocsin spells these sentences. Split by noun (the SPEC's
verbatim texts, trigger configs, actions, the data plane, workflows, the edges, the process);
every name is imported from here: ``from tocsin import messages``, ``messages.NAME``.
"""

from __future__ import annotations

from tocsin.messages.actions import *  # noqa: F403
from tocsin.messages.cli import *  # noqa: F403
from tocsin.messages.data import *  # noqa: F403
from tocsin.messages.edges import *  # noqa: F403
from tocsin.messages.process import *  # noqa: F403
from tocsin.messages.spec import *  # noqa: F403
from tocsin.messages.triggers import *  # noqa: F403
from tocsin.messages.workflows import *  # noqa: F403
