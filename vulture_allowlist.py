# vulture's allowlist (make lint): names in controller/ and agents/ that vulture cannot see used.
#
# vulture reads this file as code, never imports it (``_`` is undefined on purpose): each line
# below "uses" one name. Patterns live in pyproject's [tool.vulture]: FastAPI routes and exception
# handlers (@router.*, @app.*), pydantic validators, LangGraph nodes (@node, added by name with
# getattr), jsonschema format checks, pydantic's model_config and Alembic's revision variables.
# Everything else is here, by kind, each with where it is used. A name that is truly unused is
# deleted, not added here. Adding a name hides every name spelt the same: add it only with a
# reason, and prefer deleting the code.

# --- signatures a caller fixes: signal handlers, __exit__, structlog processors -------------------
_.signum  # signal.signal handlers (cli.py, exporter.py): (signum, frame)
_.exc_type  # __exit__(self, exc_type, exc, tb) (agents/spans.py, dispatch/journal.py)
_.logger  # a structlog processor's (logger, method, event_dict) (observability/logs.py)

# --- called by a library or by the interpreter, by name ------------------------------------------
_.auth_flow  # httpx.Auth (agents/llm/providers.py)
_.invalidate_caches  # importlib's finder protocol (environments/files/sandloop_submission.py)
_.daemon_threads  # socketserver.ThreadingMixIn (observability/exporter.py)
_.allow_reuse_address  # socketserver.TCPServer (observability/exporter.py)
_.address_family  # socketserver.TCPServer: the IPv6 server (observability/exporter.py)
_.log_message  # http.server's request log, overridden (observability/exporter.py)
_.isolation_level  # sqlite3.Connection, set (store/engine.py)
_.dont_write_bytecode  # sys, set in the sandbox's harness (agents/blueprint/harness.py)
_.setpath  # grandalf's edge view (console/views/graph_svg.py)
_.xspace  # grandalf's SugiyamaLayout, set (console/views/graph_svg.py)
_.yspace  # grandalf's SugiyamaLayout, set (console/views/graph_svg.py)
_.route_edge  # grandalf's SugiyamaLayout, set (console/views/graph_svg.py)
_.__getattr__  # a module's lazy attributes (PEP 562; controller/runner/dispatch/__init__.py)
_.sandloop_document  # the statement probe, found with getattr by sandbox_images/python-parser/entrypoint.py

# --- fields read by name: LangGraph state keys, templates, JSON and schemas ----------------------
_.exhausted  # graph state (bank_parser, idris), read as state.get("exhausted")
_.coder_failed  # graph state (bank_parser), read as state.get("coder_failed")
_.out_of_replies  # graph state (intake), read as state.get("out_of_replies")
_.total_debits  # statement facts, read by name in statement_facts.py's checks loop
_.total_credits  # statement facts, read by name in statement_facts.py's checks loop
_.limits_json  # part of the warm key's equality and hash (sandbox/pool.py)
_.sandboxed  # a research finding's field, read as f["sandboxed"] (agents/blueprint/nodes.py)
_.report_attempt  # console templates/_agent_sections.html
_.steps  # console templates/_agent_sections.html
_.code_cut  # console templates/attempt.html, verdict.html
_.stream_after  # console templates/run.html
_.can_cancel  # console templates/run.html
_.everyone  # console templates/target.html (the counts are everyone's or the viewer's)
_.can_resume  # console templates/run.html
_.is_tail  # console templates/run.html
_.active  # console templates/runs.html
_.rate_points  # console templates/target.html
_.rate_chart  # console templates/target.html
_.attempts_chart  # console templates/target.html
_.failures_chart  # console templates/target.html
_.next_cursor  # JSON of the service's list answers, and console templates/runs.html
_.fixed_runs  # JSON of GET /v1/lessons (service/history.py)
_.failure_patterns  # JSON of GET /v1/lessons (service/history.py)
_.excerpt  # an Idris diagnostic's field, shown by console templates/attempt.html
_.exclusive_minimum  # JSON Schema keyword an intake schema may hold (extra="forbid": must be declared)
_.exclusive_maximum  # JSON Schema keyword an intake schema may hold
_.min_length  # JSON Schema keyword an intake schema may hold
_.schema_uri  # JSON Schema's "$schema", which an intake schema may hold
_.answer_consumed_for_current_node  # the resolver's JSON answer (agents/intake/prompts/resolve.md asks for it)
_.target_kinds  # every agent's AgentInfo declares it (tests/unit/agents/test_registry.py)
_.meaning  # the status table's column for readers (agents/ports/status.py)
_.sandbox_network  # a setting pinned to "none": SBX_SANDBOX_NETWORK=bridge is refused (test_settings.py)

# --- used only by tests or tools/: kept for them (review these first when looking for dead code) --
_.parse_sse  # tests/integration/service, tools/bench_service.py
_.reset_logging  # tests' logging fixtures
_.read_runs  # the run-history contract tests
_.last_trace  # tests/integration/sandbox, tools/bench.py
_.wait_warm  # tests/integration/sandbox, tools/bench.py
_.drain_removals  # tests/integration/sandbox, tools/bench.py
_.removal_seconds  # tools/bench.py's "removal (background)" phase
_.misses  # the warm pool's counters, asserted by test_pool.py
_.CHECKPOINT_TABLES  # tests/integration/store/test_checkpoints_postgres.py
_.MEMORY_TABLES  # tests/integration/store/test_checkpoints_postgres.py
_.preload  # tests/unit/controller/runner/dispatch/test_launch.py (the fork server preloads by name)
_.analysis_prompt  # seed 004's analysis prompt, pinned by tests/unit/agents/idris/test_llm_coder.py
_.get_field_history  # the seed's memory API, tests/unit/agents/intake/test_memory.py
_.has_conflicts  # the seed's memory API, tests/unit/agents/intake/test_memory.py
_.get_node_with_history  # the seed's memory API, tests/unit/agents/intake/test_memory.py
_.get_last_node  # the seed's memory API, tests/unit/agents/intake/test_memory.py
