# Old tocsin.core module paths -> the core/time, core/schedules, core/config, core/contract layout.
# Usage: git ls-files '*.py' '*.md' '*.toml' | xargs sed -E -i -f scripts/core_paths.sed
#        then `ruff check --fix` (import order) and `ruff format`.
# Idempotent: text already in the new layout is left as it is. Every rewritten path is written as
# @@TC@@ (tocsin.core) / @@TCD@@ (tocsin/core) first so no later rule rewrites it again.
# Handles dotted paths (tocsin.core.X in imports, strings and docs), source paths
# (tocsin/core/X.py) and one-line `from tocsin.core import a, b as c` lists (split one per line).
# Not handled: parenthesised multi-line `from tocsin.core import (...)` lists of modules.

# 1. paths already in the new layout
s/\btocsin\.core\.(time|config)\b/@@TC@@.\1/g
s/\btocsin\.core\.schedules\.(spec|tree|tree_eval|windows|skips|identity|retry|decide|lane|timeline)\b/@@TC@@.schedules.\1/g
s/\bfrom tocsin\.core\.schedules import (spec|tree|tree_eval|windows|skips|identity|retry|decide|lane|timeline)\b/from @@TC@@.schedules import \1/g
s/\btocsin\.core\.contract\.(lane|verify)\b/@@TC@@.contract.\1/g
s/\bfrom tocsin\.core\.contract import (lane|verify)\b/from @@TC@@.contract import \1/g
s/"tocsin\.core\.(schedules|contract)"/"@@TC@@.\1"/g
s/\btocsin\/core\/(time|config)\//@@TCD@@\/\1\//g
s/\btocsin\/core\/schedules\/(spec|tree|tree_eval|windows|skips|identity|retry|decide|lane|timeline)\b/@@TCD@@\/schedules\/\1/g
s/\btocsin\/core\/contract\/(lane|verify)\b/@@TCD@@\/contract\/\1/g

# 2. split one-line `from tocsin.core import a, b` into one import per line
:split
s/^([ \t]*)from tocsin\.core import ([A-Za-z_]+( as [A-Za-z_]+)?), *([A-Za-z_])/\1from tocsin.core import \2\n\1from tocsin.core import \4/M
t split

# 3. `from tocsin.core import X` (module imports)
s/^([ \t]*)from tocsin\.core import (cron|zones|instants)\b/\1from @@TC@@.time import \2/Mg
s/^([ \t]*)from tocsin\.core import (windows|skips|identity)\b/\1from @@TC@@.schedules import \2/Mg
s/^([ \t]*)from tocsin\.core import (triggers|adoption|predicates|templates|action_checks|action_fields|allowlist|cells|limits|patch|targets|exposure|receipts)\b/\1from @@TC@@.config import \2/Mg
s/^([ \t]*)from tocsin\.core import schedules as /\1from @@TC@@.schedules import spec as /Mg
s/^([ \t]*)from tocsin\.core import schedules\b/\1from @@TC@@.schedules import spec as schedules/Mg
s/^([ \t]*)from tocsin\.core import compound_eval as /\1from @@TC@@.schedules import tree_eval as /Mg
s/^([ \t]*)from tocsin\.core import compound_eval\b/\1from @@TC@@.schedules import tree_eval as compound_eval/Mg
s/^([ \t]*)from tocsin\.core import compound as /\1from @@TC@@.schedules import tree as /Mg
s/^([ \t]*)from tocsin\.core import compound\b/\1from @@TC@@.schedules import tree as compound/Mg
s/^([ \t]*)from tocsin\.core import retry_policy as /\1from @@TC@@.schedules import retry as /Mg
s/^([ \t]*)from tocsin\.core import retry_policy\b/\1from @@TC@@.schedules import retry as retry_policy/Mg
s/^([ \t]*)from tocsin\.core import contract_verify as /\1from @@TC@@.contract import verify as /Mg
s/^([ \t]*)from tocsin\.core import contract_verify\b/\1from @@TC@@.contract import verify as contract_verify/Mg
s/^([ \t]*)from tocsin\.core import contract as /\1from @@TC@@.contract import lane as /Mg
s/^([ \t]*)from tocsin\.core import contract\b/\1from @@TC@@.contract import lane as contract/Mg

# 4. dotted module paths
s/\btocsin\.core\.(cron|zones|instants)\b/@@TC@@.time.\1/g
s/\btocsin\.core\.compound_eval\b/@@TC@@.schedules.tree_eval/g
s/\btocsin\.core\.compound\b/@@TC@@.schedules.tree/g
s/\btocsin\.core\.retry_policy\b/@@TC@@.schedules.retry/g
s/\btocsin\.core\.(windows|skips|identity)\b/@@TC@@.schedules.\1/g
s/\btocsin\.core\.schedules\b/@@TC@@.schedules.spec/g
s/\btocsin\.core\.(triggers|adoption|predicates|templates|action_checks|action_fields|allowlist|cells|limits|patch|targets|exposure|receipts)\b/@@TC@@.config.\1/g
s/\btocsin\.core\.contract_verify\b/@@TC@@.contract.verify/g
s/\btocsin\.core\.contract\b/@@TC@@.contract.lane/g

# 5. source paths
s/\btocsin\/core\/(cron|zones|instants)\b/@@TCD@@\/time\/\1/g
s/\btocsin\/core\/compound_eval\.py/@@TCD@@\/schedules\/tree_eval.py/g
s/\btocsin\/core\/compound\.py/@@TCD@@\/schedules\/tree.py/g
s/\btocsin\/core\/retry_policy\.py/@@TCD@@\/schedules\/retry.py/g
s/\btocsin\/core\/(windows|skips|identity)\.py/@@TCD@@\/schedules\/\1.py/g
s/\btocsin\/core\/schedules\.py/@@TCD@@\/schedules\/spec.py/g
s/\btocsin\/core\/(triggers|adoption|predicates|templates|action_checks|action_fields|allowlist|cells|limits|patch|targets|exposure|receipts)\.py/@@TCD@@\/config\/\1.py/g
s/\btocsin\/core\/contract_verify\.py/@@TCD@@\/contract\/verify.py/g
s/\btocsin\/core\/contract\.py/@@TCD@@\/contract\/lane.py/g


# 7. modules added beside the move (the one decision, lane schedules, run policies)
s/\btocsin\.core\.decide\b/@@TC@@.schedules.decide/g
s/\btocsin\.core\.schedule_timeline\b/@@TC@@.schedules.timeline/g
s/\btocsin\.core\.lane_schedule\b/@@TC@@.schedules.lane/g
s/\btocsin\.core\.run_policies\b/@@TC@@.config.run_policies/g
s/^([ \t]*)from tocsin\.core import decide\b/\1from @@TC@@.schedules import decide/Mg
s/^([ \t]*)from tocsin\.core import lane_schedule\b/\1from @@TC@@.schedules import lane as lane_schedule/Mg
s/\btocsin\/core\/decide\.py/@@TCD@@\/schedules\/decide.py/g
s/\btocsin\/core\/lane_schedule\.py/@@TCD@@\/schedules\/lane.py/g
s/\btocsin\/core\/run_policies\.py/@@TCD@@\/config\/run_policies.py/g
s/\btocsin\/core\/schedule_timeline\.py/@@TCD@@\/schedules\/timeline.py/g

# 6. write the placeholders out
s/@@TC@@/tocsin.core/g
s/@@TCD@@/tocsin\/core/g
