# Old tocsin.workflows fire-pass module paths -> engine/ (fire passes, why-not) and service/ (views).
# Usage: git ls-files '*.py' '*.md' '*.toml' | xargs sed -E -i -f scripts/engine_paths.sed
#        then `ruff check --fix` (import order) and `ruff format`.
# Handles dotted paths (imports, strings, docs) and `from tocsin.workflows import X` of one module.
# subjects_of moved from workflows.compound to engine.schedule_rows; public_schedule from
# workflows.views to service.schedule_views (fix those two imports by hand).
s/\btocsin\.workflows\.firing\b/tocsin.engine.schedules/g
s/\btocsin\.workflows\.compound_whynot\b/tocsin.engine.schedule_whynot/g
s/\btocsin\.workflows\.compound\b/tocsin.engine.trees/g
s/\btocsin\.workflows\.backfill\b/tocsin.engine.backfill/g
s/\btocsin\.workflows\.whynot\b/tocsin.engine.schedule_whynot/g
s/\btocsin\.workflows\.timing\b/tocsin.engine.schedule_rows/g
s/\btocsin\.workflows\.trigger_views\b/tocsin.service.schedule_views/g
s/\btocsin\/workflows\/firing\.py\b/tocsin\/engine\/schedules.py/g
s/\btocsin\/workflows\/compound_whynot\.py\b/tocsin\/engine\/schedule_whynot.py/g
s/\btocsin\/workflows\/compound\.py\b/tocsin\/engine\/trees.py/g
s/\btocsin\/workflows\/backfill\.py\b/tocsin\/engine\/backfill.py/g
s/\btocsin\/workflows\/whynot\.py\b/tocsin\/engine\/schedule_whynot.py/g
s/\btocsin\/workflows\/timing\.py\b/tocsin\/engine\/schedule_rows.py/g
s/\btocsin\/workflows\/trigger_views\.py\b/tocsin\/service\/schedule_views.py/g
s/^([ \t]*)from tocsin\.workflows import firing\b/\1from tocsin.engine import schedules/Mg
s/^([ \t]*)from tocsin\.workflows import compound\b/\1from tocsin.engine import trees/Mg
s/^([ \t]*)from tocsin\.workflows import backfill\b/\1from tocsin.engine import backfill/Mg
s/^([ \t]*)from tocsin\.workflows import timing\b/\1from tocsin.engine import schedule_rows/Mg
s/\bworkflows\.(firing|compound|compound_whynot|whynot|timing|backfill|trigger_views)\b/@@WF@@\1/g
s/@@WF@@firing/engine.schedules/g
s/@@WF@@compound_whynot/engine.schedule_whynot/g
s/@@WF@@compound/engine.trees/g
s/@@WF@@backfill/engine.backfill/g
s/@@WF@@whynot/engine.schedule_whynot/g
s/@@WF@@timing/engine.schedule_rows/g
s/@@WF@@trigger_views/service.schedule_views/g
