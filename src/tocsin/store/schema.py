"""The one MetaData of tocsin: every table the store reads or writes (DESIGN §3, §5).

All instants are stored as naive UTC in ``UTCDateTime`` columns (``store.coltypes``) and come
back aware (UTC).
JSON columns hold plain JSON values (never pickles).
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)

from tocsin.store.coltypes import UTCDateTime

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
metadata = MetaData(naming_convention=NAMING)


ACTIVE_STATUSES = ("pending", "running")
# the predicate of uq_runs_one_active_clock; runs.insert_run repeats it verbatim in ON CONFLICT so
# both dialects infer the partial index (SQLite requires the WHERE to imply the index's own)
ONE_ACTIVE_CLOCK_WHERE = "clock AND status IN ('pending', 'running')"
# a run of the queue's table and lane kinds, not a workflow run (``runs.kind``): the predicate of
# the indexes only those read (0035). A statement that must read one of them says it in these
# words, as SQL text (a bound parameter would match no partial index on SQLite)
QUEUE_RUN_WHERE = "kind <> 'workflow'"
# a pending run of any kind: the predicate of ``ix_runs_pending_scope``, the one claim's (0036)
PENDING_WHERE = "status = 'pending'"
# a table's run (not a lane attempt's nor a workflow run's row, whose table_id is ''): the
# predicate of ``ix_runs_table_created`` (0035), said in these words by the statements reading it
TABLE_RUN_WHERE = "table_id <> ''"
SCOPE_KEY = String(200).with_variant(String(200, collation="C"), "postgresql")
RUNNING_LIMITED_WHERE = "status = 'running' AND max_concurrent IS NOT NULL"
SCHEDULED_RUN_WHERE = "source = 'schedule'"
# the runs the stuck filter and the stale-run sweep read (SPEC §8): running or failed, never a
# pending run (a created run enters no status index but the claim's) nor a done one
STUCK_CANDIDATE_WHERE = "status = 'running' OR status = 'failed'"
STUCK_WHERE = f"({STUCK_CANDIDATE_WHERE}) AND {QUEUE_RUN_WHERE}"  # ix_runs_stuck's (0035)

# §1 tables: scope + typed columns + triggers config + SCP rules, trashable.
tables = Table(
    "tables",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("scope", String(16), nullable=False),
    Column("scope_id", String(36), nullable=False),
    Column("name", String(200), nullable=False),
    Column("columns", JSON, nullable=False),  # {"Due": "datetime", ...} in authored order
    # none_as_null: Python None is SQL NULL (not JSON 'null'), so "IS NOT NULL" finds candidates
    Column("triggers", JSON(none_as_null=True), nullable=True),  # normalized config or null
    Column("scp_rules", JSON(none_as_null=True), nullable=True),
    Column("requires_approval", Boolean, nullable=False, server_default=text("false")),
    Column("trashed", Boolean, nullable=False, server_default=text("false")),
    # earliest instant this table may have due work; null = unknown, evaluate at every tick
    # (the engine writes it after each evaluation so idle tables are skipped, DESIGN §5)
    Column("next_due_at", UTCDateTime, nullable=True),
    # rotation cursor: the tick visits candidate tables in order of last_ticked_at
    Column("last_ticked_at", UTCDateTime, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Index("ix_tables_scope", "scope", "scope_id"),
    Index("ix_tables_candidates", "trashed", "last_ticked_at"),
    Index("ix_tables_next_due", "next_due_at"),  # finds the few due tables among many idle ones
    # SQLite's candidate claim: the due tables' rotation order from the index alone, over the
    # tables that can have due triggers at all (0027)
    Index(
        "ix_tables_due",
        "next_due_at",
        "last_ticked_at",
        "id",
        sqlite_where=text("trashed = false AND triggers IS NOT NULL"),
        postgresql_where=text("trashed = false AND triggers IS NOT NULL"),
    ),
)

# §2 records
records = Table(
    "records",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("table_id", String(36), ForeignKey("tables.id", ondelete="CASCADE"), nullable=False),
    Column("data", JSON, nullable=False),
    Column("trashed", Boolean, nullable=False, server_default=text("false")),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Index("ix_records_page", "table_id", "trashed", "created_at", "id"),
)

# §5.1 one durable row per schedule trigger id of a table: an id is unique within its table only
# (migration 0020), so two tables (two tenants) may use the same id independently
trigger_state = Table(
    "trigger_state",
    metadata,
    Column("trigger_id", String(64), nullable=False),
    Column("table_id", String(36), ForeignKey("tables.id", ondelete="CASCADE"), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("anchor", UTCDateTime, nullable=True),  # clock kinds: windows start here
    Column("last_consumed", UTCDateTime, nullable=True),  # clock kinds: last window claimed
    Column("cursor_created_at", UTCDateTime, nullable=True),  # date kind: rotating cursor
    Column("cursor_id", String(36), nullable=True),
    Column("schedule_hash", String(64), nullable=True),  # detects re-anchoring edits
    Column("retired", Boolean, nullable=False, server_default=text("false")),
    Column("next_due_at", UTCDateTime, nullable=True),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("paused_at", UTCDateTime, nullable=True),  # set while paused (migration 0007)
    # a date trigger's past pauses [[from, until], ...] (ISO): their occurrences never fire
    Column("pause_windows", JSON(none_as_null=True), nullable=True),
    # the trigger's current definition in ``trigger_definitions`` (migration 0025): what a run
    # the tick creates freezes, by reference
    Column("definition_hash", String(32), nullable=True),
    PrimaryKeyConstraint("table_id", "trigger_id"),  # also every lookup by table (0021)
    # PostgreSQL: room for a new version of every row on its page, so the tick's per-fire
    # rewrites are HOT updates (migration 0002)
    postgresql_with={"fillfactor": 50},
)

# §8 frozen trigger definitions, content-addressed (``core.schedules.identity.definition_digest``):
# written when a config is saved, never changed; a schedule run names its definition by hash
# instead of carrying a copy (migration 0025)
trigger_definitions = Table(
    "trigger_definitions",
    metadata,
    Column("hash", String(32), primary_key=True),
    Column("definition", JSON, nullable=False),
)

# §5 the occurrence ledger: the durable fence, (trigger, identity) claimed at most once
occurrence_ledger = Table(
    "occurrence_ledger",
    metadata,
    Column("trigger_id", String(64), nullable=False),
    Column("identity", String(200), nullable=False),
    Column("table_id", String(36), nullable=False),
    Column("run_id", String(36), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    # a trigger id is unique within its table: the fence is (table, trigger, identity); the
    # table first keeps a table's claims together in the index (migration 0003)
    PrimaryKeyConstraint("table_id", "trigger_id", "identity"),
)

WORKFLOW_KIND = "workflow"
# the kinds of run in the one queue (``runs.kind``), each claimed by the one claim and executed by
# the one worker through its kind's executor: a table trigger's actions, a lane attempt, a
# workflow run
RUN_KINDS = ("actions", "lane", WORKFLOW_KIND)
WORKFLOW_WHERE = f"kind = '{WORKFLOW_KIND}'"  # the predicate of the workflow runs' indexes
APP_RUN_SCOPE = "app"  # the scope of the app's own runs (lane attempts): one of the claim's turns
# a workflow run's scope (0036): a path under the app's tenant scope, ``app/wf:<workflow>`` and,
# for a run of a schedule declaring ``max_concurrent``, ``app/wf:<workflow>/<schedule>``
# (``store.workflow_runs.insert_runs``): the one claim visits each as a turn, and a workflow's or
# schedule's ``max_concurrent`` is a limit of its scope (the workflow's: of its own scope and its
# schedules' together). A workflow id has no
# ``/`` (``workflows.definition``); every workflow scope is in [``app/wf:``, ``app/wf;``)
WORKFLOW_SCOPE_PREFIX = f"{APP_RUN_SCOPE}/wf:"
# a workflow run that is not pending (the predicate of ``ix_runs_workflow_status``, 0036): a
# pending one is in ``ix_runs_pending_scope`` instead, so a run enters as many indexes as before
WORKFLOW_HELD_WHERE = f"{WORKFLOW_WHERE} AND status <> 'pending'"
WORKFLOW_ACTIVE = ("pending", "running")
# the overlap fence's test (``workflow_runs.active_schedule_ids``), the predicate of the partial
# ``ix_runs_workflow_schedule``: written in the same words, so SQLite matches the two
WORKFLOW_ACTIVE_WHERE = f"status IN ({', '.join(repr(s) for s in WORKFLOW_ACTIVE)})"

# §8 runs: the one run queue. Every run, whatever its kind, is a row here with its queue columns
# (kind, status, scope, attempts, next_attempt_at, updated_at: the lease, started/finished_at);
# what only one kind has stays in that kind's table, keyed by the run's id (a lane attempt:
# ``lane_attempts.attempt_id``). Status words are per kind: pending and running are shared, the
# final ones are the kind's (actions: done | failed; lane: recorded | failed; workflow: success |
# failed | suspended | canceled). A table trigger's run has its columns here; a lane attempt's row
# has table_id '' and its lane as trigger_id; a workflow run's row too has table_id '', its
# workflow as trigger_id and its own columns (``store.workflow_runs``).
runs = Table(
    "runs",
    metadata,
    Column("id", String(48), primary_key=True),
    Column("kind", String(16), nullable=False, server_default=text("'actions'")),
    Column("table_id", String(36), nullable=False),  # no FK: a run outlives its table (§8)
    Column("trigger_id", String(64), nullable=False),
    Column("record_id", String(36), nullable=True),
    Column("source", String(16), nullable=False),  # created|updated|deleted|restored|schedule
    Column("clock", Boolean, nullable=False, server_default=text("false")),
    Column("status", String(16), nullable=False),  # pending → running → done | failed
    Column("attempts", Integer, nullable=False, server_default=text("0")),
    Column("error", Text, nullable=True),
    Column("action_results", JSON, nullable=False),
    # the row snapshot: in ``row_snapshots`` when ``snapshot_id`` is set (``{}`` here), else here
    # (a recordless run's ``{}``); ``store.runs.RUN_COLUMNS`` reads either as ``payload``
    Column("payload", JSON, nullable=False),
    Column("snapshot_id", String(36), nullable=True),
    # the trigger definition as it fired: a copy (row events; runs before migration 0025) or,
    # for schedule and manual runs, its ``trigger_definitions`` hash (``store.runs.RUN_COLUMNS``
    # reads either as ``definition``)
    Column("definition", JSON(none_as_null=True), nullable=True),
    Column("definition_hash", String(32), nullable=True),
    Column("identity", String(200), nullable=True),
    Column("scheduled_for", UTCDateTime, nullable=True),
    Column("enqueued_at", UTCDateTime, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("started_at", UTCDateTime, nullable=True),
    Column("finished_at", UTCDateTime, nullable=True),
    # automatic retry (migration 0011): a pending run waiting for its backoff is not
    # claimed before this instant; NULL: claimable at once
    Column("next_attempt_at", UTCDateTime, nullable=True),
    # the run's scope, ``scope:scope_id`` of its table at insert ('' for a table gone before the
    # migration that added it, 0029): the claim takes the scopes in turn (``store.runs``); the
    # run of a row-event trigger with ``max_concurrent`` (copied here) has a scope of its own
    # within its table's: ``scope:scope_id/table_id/trigger_id``
    # (PostgreSQL: byte order, ``COLLATE "C"``, as SQLite and Python compare; see next_turn)
    Column("scope", SCOPE_KEY, nullable=False, server_default=text("''")),
    Column("max_concurrent", Integer, nullable=True),
    # a workflow run's own columns (migration 0035; NULL in every other kind's row): its
    # schedule, input, output, state, context, suspension, resume data, failure alert and the
    # number of its current attempt. Its other columns are shared: ``trigger_id`` is its workflow,
    # ``source`` its trigger word (scheduled | manual | backfill), ``action_results`` its step
    # receipts, ``finished_at`` its end; ``table_id`` is '' and ``scope`` the app's
    Column("schedule_id", String(64), nullable=True),
    Column("input", JSON(none_as_null=True), nullable=True),
    Column("output", JSON(none_as_null=True), nullable=True),
    Column("initial_state", JSON(none_as_null=True), nullable=True),
    Column("request_context", JSON(none_as_null=True), nullable=True),
    Column("suspend_payload", JSON(none_as_null=True), nullable=True),
    Column("resume_data", JSON(none_as_null=True), nullable=True),
    Column("alert", JSON(none_as_null=True), nullable=True),
    Column("attempt", Integer, nullable=True),
    # the indexes below up to the workflow ones hold no workflow run (TABLE_RUN_WHERE,
    # QUEUE_RUN_WHERE, or a predicate no workflow run meets: clock, source 'schedule',
    # max_concurrent) but the claim's ix_runs_pending_scope, while it is pending, where it is in
    # no ix_runs_workflow_status: a workflow run writes three and the primary key (0035, 0036)
    Index(
        "ix_runs_table_created",
        "table_id",
        "created_at",
        postgresql_where=text(TABLE_RUN_WHERE),
        sqlite_where=text(TABLE_RUN_WHERE),
    ),
    # the stuck filter, its gauge and the stale-run sweep: running and failed runs of the
    # queue's kinds (0034, 0035)
    Index(
        "ix_runs_stuck",
        "status",
        "updated_at",
        "id",
        postgresql_where=text(STUCK_WHERE),
        sqlite_where=text(STUCK_WHERE),
    ),
    # the one claim: the scopes with pending runs (every kind, 0036), and each one's oldest,
    # from the index alone
    Index(
        "ix_runs_pending_scope",
        "scope",
        "updated_at",
        "id",
        postgresql_where=text(PENDING_WHERE),
        sqlite_where=text(PENDING_WHERE),
    ),
    # the running runs of a limited trigger, counted by the claim (its room)
    Index(
        "ix_runs_running_limited",
        "scope",
        postgresql_where=text(RUNNING_LIMITED_WHERE),
        sqlite_where=text(RUNNING_LIMITED_WHERE),
    ),
    # a trigger's fire history: its scheduled runs, newest instant first (migration 0029)
    Index(
        "ix_runs_trigger_fires",
        "table_id",
        "trigger_id",
        "scheduled_for",
        "id",
        postgresql_where=text(SCHEDULED_RUN_WHERE),
        sqlite_where=text(SCHEDULED_RUN_WHERE),
    ),
    # §5.3 one active run per clock trigger of a table (migration 0020)
    Index(
        "uq_runs_one_active_clock",
        "table_id",
        "trigger_id",
        unique=True,
        postgresql_where=text(ONE_ACTIVE_CLOCK_WHERE),
        sqlite_where=text(ONE_ACTIVE_CLOCK_WHERE),
    ),
    # the workflow runs past pending (0036; pending ones are in ix_runs_pending_scope): the
    # running runs of a workflow's or schedule's scope, counted by the claim (its room), the
    # stale sweep's (status, updated_at), the counts and listings by status
    Index(
        "ix_runs_workflow_status",
        "status",
        "scope",
        "updated_at",
        postgresql_where=text(WORKFLOW_HELD_WHERE),
        sqlite_where=text(WORKFLOW_HELD_WHERE),
    ),
    # a workflow's runs, newest first (``trigger_id``: the workflow)
    Index(
        "ix_runs_workflow_created",
        "trigger_id",
        "created_at",
        postgresql_where=text(WORKFLOW_WHERE),
        sqlite_where=text(WORKFLOW_WHERE),
    ),
    # the overlap fence: active runs only, so a finished run leaves it (0022); ``status`` kept, so
    # SQLite's planner still sees the fence's two tests in it (not only the status index's one)
    Index(
        "ix_runs_workflow_schedule",
        "schedule_id",
        "status",
        postgresql_where=text(f"{WORKFLOW_WHERE} AND {WORKFLOW_ACTIVE_WHERE}"),
        sqlite_where=text(f"{WORKFLOW_WHERE} AND {WORKFLOW_ACTIVE_WHERE}"),
    ),
)

# §8 row snapshots: the record one write (or one tick) ran its triggers with, stored once and
# named by its runs' ``snapshot_id`` (migration 0028): a write that fires 100 triggers keeps one
# copy of its row, not 100. Its id is the id of the first run created with it.
row_snapshots = Table(
    "row_snapshots",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("payload", JSON, nullable=False),
)

# §10 notify's chatroom message feed
chat_messages = Table(
    "chat_messages",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("chatroom_id", String(36), nullable=False),
    Column("table_id", String(36), nullable=True),
    Column("run_id", String(36), nullable=True),
    Column("text", Text, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Index("ix_chat_messages_room", "chatroom_id", "created_at"),
)

# §9.6 approval gate
staged_changes = Table(
    "staged_changes",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("table_id", String(36), nullable=False),
    Column("run_id", String(36), nullable=True),
    Column("action_id", String(64), nullable=True),
    Column("operation", String(16), nullable=False),  # create|update|delete
    Column("record_id", String(36), nullable=True),
    Column("values", JSON, nullable=False),
    Column("status", String(16), nullable=False),  # staged → approved → applied | rejected
    Column("error", Text, nullable=True),
    Column("decided_at", UTCDateTime, nullable=True),
    Column("applied_at", UTCDateTime, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Index("ix_staged_changes_table", "table_id", "status"),
    # the tick's sweep of lost applications (``applying`` and old), not every change kept (0031)
    Index("ix_staged_changes_status", "status", "updated_at"),
)

# §9.5 invoke_command idempotency: one row per key, reserved then completed
command_results = Table(
    "command_results",
    metadata,
    Column("idempotency_key", String(200), primary_key=True),
    Column("command", String(200), nullable=False),
    Column("status", String(16), nullable=False),  # reserved | succeeded
    Column("result", JSON, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)

# §15 API tokens, stored hashed
api_tokens = Table(
    "api_tokens",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("scope", String(16), nullable=False),
    Column("scope_id", String(36), nullable=False),
    Column("role", String(16), nullable=False),  # member | moderator
    Column("created_at", UTCDateTime, nullable=False),
    # §15 expiry and revocation, migration 0004
    Column("expires_at", UTCDateTime, nullable=True),  # NULL: never expires
    Column("revoked_at", UTCDateTime, nullable=True),  # NULL: not revoked
    # §15 API-wide permissions (``schedules:read`` / ``schedules:write``), migration 0006
    Column("permissions", JSON(none_as_null=True), nullable=True),
)

# §12 one row per workflow schedule: declared in code (``wf_…``) or imperative (``sch_…``)
workflow_schedules = Table(
    "workflow_schedules",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("workflow_id", String(64), nullable=False),
    Column("source", String(16), nullable=False),  # declared | imperative
    Column("cron", String(200), nullable=False),  # extended dialect (§13)
    Column("timezone", String(64), nullable=False),
    Column("overlap", String(8), nullable=False),  # skip | allow
    # the missed instants a due fire owes: latest | none | all (migration 0010)
    Column("catch_up", String(8), nullable=False, server_default="latest"),
    Column("max_catch_up", Integer, nullable=False, server_default=text("100")),
    Column("input_data", JSON(none_as_null=True), nullable=True),
    Column("initial_state", JSON(none_as_null=True), nullable=True),
    Column("request_context", JSON(none_as_null=True), nullable=True),
    Column("meta", JSON(none_as_null=True), nullable=True),  # the schedule's ``metadata``
    Column("next_fire_at", UTCDateTime, nullable=True),  # null: never fires again
    Column("last_fire_id", String(36), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    # §13 compound trigger (JSON tree; null: a plain ``cron`` schedule), its event latches
    # (leaf path → ISO instant) and the instant up to which its time triggers were evaluated
    Column("trigger_tree", JSON(none_as_null=True), nullable=True),
    Column("latches", JSON(none_as_null=True), nullable=True),
    Column("evaluated_at", UTCDateTime, nullable=True),
    Column("trigger_keys", Text, nullable=True),  # " kind:subject … ": what the tree listens to
    Column("paused_at", UTCDateTime, nullable=True),  # set while paused (migration 0033)
    # the cron schedules' claim, in its order ``next_fire_at, id``: a page of due rows read, none
    # sorted; neither the tree schedules nor the paused ones are in it (0022, 0033)
    Index(
        "ix_workflow_schedules_due",
        "next_fire_at",
        "id",
        sqlite_where=text("trigger_tree IS NULL AND paused_at IS NULL"),
        postgresql_where=text("trigger_tree IS NULL AND paused_at IS NULL"),
    ),
    Index("ix_workflow_schedules_workflow", "workflow_id"),
    # the schedules with a trigger tree: what an event writer tests (``trigger_events``), without
    # reading every plain cron schedule on each record write
    Index(
        "ix_workflow_schedules_listening",
        "id",
        sqlite_where=text("trigger_keys IS NOT NULL"),
        postgresql_where=text("trigger_keys IS NOT NULL"),
    ),
    # the schedules with a trigger tree, in id order: the compound pass's due claim on every tick
    # reads them only, not every plain cron schedule (0022)
    Index(
        "ix_workflow_schedules_trees",
        "id",
        sqlite_where=text("trigger_tree IS NOT NULL"),
        postgresql_where=text("trigger_tree IS NOT NULL"),
    ),
    # the tree pass's due claim in its order ``next_fire_at, id``: a page of due rows read, none
    # sorted; the paused ones are not in it (0032, 0033)
    Index(
        "ix_workflow_schedules_tree_due",
        "next_fire_at",
        "id",
        sqlite_where=text("trigger_tree IS NOT NULL AND paused_at IS NULL"),
        postgresql_where=text("trigger_tree IS NOT NULL AND paused_at IS NULL"),
    ),
)

# the skip ledger: due occurrences that did not fire, one row per range of one reason
skips = Table(
    "skips",
    metadata,
    Column("target_kind", String(16), nullable=False),  # trigger | schedule
    Column("target_id", String(64), nullable=False),
    Column("reason", String(32), nullable=False),
    Column("first_instant", UTCDateTime, nullable=False),
    Column("last_instant", UTCDateTime, nullable=False),
    Column("count", BigInteger, nullable=False),
    Column("at_least", Boolean, nullable=False, server_default=text("false")),  # count capped
    # a trigger's table ('' for a workflow schedule): a trigger id is unique within its table only,
    # so the table is part of the target (migration 0020)
    Column("table_id", String(36), nullable=False, server_default=text("''")),
    Column("updated_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("target_kind", "table_id", "target_id", "reason", "first_instant"),
    Index("ix_skips_last", "target_kind", "table_id", "target_id", "reason", "last_instant"),
)

# §12 the fire history: one row per fire, scheduled vs actual time, publish status
schedule_fires = Table(
    "schedule_fires",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("schedule_id", String(64), nullable=False),
    Column("workflow_id", String(64), nullable=False),
    Column("scheduled_for", UTCDateTime, nullable=False),
    Column("fired_at", UTCDateTime, nullable=False),
    Column("run_id", String(36), nullable=True),
    Column("publish_status", String(16), nullable=False),  # published | publish_failed
    Column("error", Text, nullable=True),
    Index("ix_schedule_fires_page", "schedule_id", "scheduled_for"),
)

# per-scope webhook signing secrets (migration 0011): one live secret per scope, kept in
# clear (an HMAC key must be usable); rotating replaces it
signing_secrets = Table(
    "signing_secrets",
    metadata,
    Column("scope", String(16), nullable=False),
    Column("scope_id", String(36), nullable=False),
    Column("secret", String(128), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("scope", "scope_id"),
)

# §14 lanes: one row per registered lane (its schedule's next instant; the per-lane lock row)
lanes = Table(
    "lanes",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("cron", String(200), nullable=True),  # null: a lane without a schedule
    Column("timezone", String(64), nullable=False),
    Column("policy_version", String(200), nullable=False),
    Column("next_fire_at", UTCDateTime, nullable=True),  # the next instant the tick fires
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("paused_at", UTCDateTime, nullable=True),  # set while paused (migration 0029)
    Index("ix_lanes_due", "next_fire_at"),
)

# §14 one row per logical run (run_id); ``admitted`` once it passed the overlap and duplicate
# checks: only admitted windows count for the overlap check; ``attempts`` allocates numbers
lane_runs = Table(
    "lane_runs",
    metadata,
    Column("run_id", String(40), primary_key=True),
    Column("lane_id", String(64), nullable=False),
    Column("zone", String(64), nullable=False),
    Column("scheduled_for", UTCDateTime, nullable=False),
    Column("window_start", UTCDateTime, nullable=False),
    Column("window_end", UTCDateTime, nullable=False),
    Column("policy_version", String(200), nullable=False),
    Column("admitted", Boolean, nullable=False),
    Column("attempts", Integer, nullable=False),
    # admitted runs: pending → running → recorded | failed (retry: → pending again)
    Column("state", String(16), nullable=False),
    Column("decision", String(16), nullable=True),  # of the last attempt that asked the source
    Column("handler_status", String(16), nullable=True),  # succeeded | failed | null
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Index("ix_lane_runs_window", "lane_id", "admitted", "window_start", "window_end"),
)

# §14 one row per attempt: the contract document and, beside it, the handler's outcome
lane_attempts = Table(
    "lane_attempts",
    metadata,
    Column("attempt_id", String(48), primary_key=True),
    Column("run_id", String(40), nullable=False),
    Column("lane_id", String(64), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("kind", String(16), nullable=False),  # scheduled | manual | retry
    Column("observed_at", UTCDateTime, nullable=False),
    Column("decision_status", String(16), nullable=True),
    Column("decision_reason", String(32), nullable=True),
    Column("contract", JSON(none_as_null=True), nullable=True),
    Column("handler_status", String(16), nullable=True),  # succeeded | failed | null
    Column("handler_error", Text, nullable=True),
    Column("error", Text, nullable=True),  # an attempt that failed before its decision
    Column("created_at", UTCDateTime, nullable=False),
    # the failure alert's outcome (0029). The attempt's queue columns (state: pending → running
    # → recorded | failed, next_attempt_at, updated_at) are its row in ``runs`` (0030)
    Column("alert", JSON(none_as_null=True), nullable=True),
    UniqueConstraint("run_id", "attempt", name="uq_lane_attempts_run_attempt"),
    Index("ix_lane_attempts_page", "lane_id", "created_at"),
    Index("ix_lane_attempts_decision", "lane_id", "decision_status", "created_at"),
)

# §13 the event outbox: written in the transaction of its cause, consumed (deleted) by the tick
trigger_events = Table(
    "trigger_events",
    metadata,
    Column(
        "id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("kind", String(32), nullable=False),
    Column("subject", String(64), nullable=False),
    Column("occurred_at", UTCDateTime, nullable=False),
)

# §13 the definition hash of each workflow at its last sync (``definition_changed``)
workflow_definitions = Table(
    "workflow_definitions",
    metadata,
    Column("workflow_id", String(64), primary_key=True),
    Column("hash", String(64), nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
)
