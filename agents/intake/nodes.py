"""The nodes of the intake agent (seed 002): analyze, ask (info role), listen, resolve (state
resolver), decide (decision role), finish. Each returns an update, a one-word outcome and a
detail; :func:`agents.loop.node` adds timing and the progress event. Each role node builds
its role's narrow input itself (:mod:`agents.intake.views`) and calls the role, a pure function.
"""

from __future__ import annotations

import json

from langgraph.runtime import Runtime

from agents.intake.decision import ranked
from agents.intake.judge import judge
from agents.intake.models import Question, Resolution
from agents.intake.replies import scripted
from agents.intake.resolver import ResolverInput
from agents.intake.state import IntakeContext, IntakeState
from agents.intake.views import decision_input, info_input
from agents.loop import Update, node
from agents.untrusted_text import one_line

AGENT = "intake"
GRAPH_FILE = "graph.json"
TRANSCRIPT_FILE = "transcript.md"


@node("analyze")
def analyze(state: IntakeState, runtime: Runtime[IntakeContext]) -> tuple[Update, str, str]:
    """Start at the node the decision role's ranking puts first (what the memory holds already counts)."""
    ctx = runtime.context
    target = ctx.target
    statuses = decision_input(target, ctx.memory, "", [], []).nodes
    first = next(iter(ranked([n for n in statuses if n.pending > 0] or list(statuses))), statuses[0]).name
    ctx.memory.visit(0, first)
    source = ("replies as they come" if ctx.replies is not None
              else f"{len(target.replies)} scripted repl{'y' if len(target.replies) == 1 else 'ies'}")
    held = sum(n.filled for n in statuses)
    memory = f"; {held} fact(s) held for {ctx.subject}" if ctx.subject else ""
    detail = (f"goal: {one_line(target.goal, 60)}; {len(target.nodes)} node(s) ({', '.join(target.nodes)}); "
              f"{source}{memory}")
    return {"node": first, "attempt": 0, "step": 0}, "ok", detail


@node("ask")
def ask(state: IntakeState, runtime: Runtime[IntakeContext]) -> tuple[Update, str, str]:
    """The info role: one question for the current node, or complete."""
    ctx = runtime.context
    question = _what_changed(ctx, state) or ctx.roles.ask(
        info_input(ctx.target, ctx.memory, state["node"], state.get("asked", [])))
    if question is None:
        data = ctx.memory.get_all_nodes_data().get(state["node"], {})
        ctx.memory.add_node_snapshot(state["node"], data)
        return {"question": {}}, "complete", f"{state['node']}: nothing left to ask"
    # A live conversation shows the question where the reply is typed (terminal, service): say it once.
    detail = question.key if ctx.replies is not None else one_line(question.text, 300)
    return {"question": question.to_json(), "asked": [question.key]}, question.kind, detail


def _what_changed(ctx: IntakeContext, state: IntakeState) -> Question | None:
    """A returning subject whose facts are all held: the conversation opens with what is known and
    asks what changed (once), so the person can update it (issue 40)."""
    if not ctx.subject or "changes" in state.get("asked", []) or state.get("attempt", 0) > 0:
        return None
    statuses = decision_input(ctx.target, ctx.memory, "", state.get("asked", []), []).nodes
    values = ctx.memory.get_all_nodes_data()
    known = [(node, name, value) for node in ctx.target.nodes for name, value in values.get(node, {}).items()
             if value is not None]
    if not known or any(status.pending for status in statuses):
        return None
    said = "; ".join(f"{name.replace('_', ' ')} {value}" for _, name, value in known[:12])
    node, name, _ = known[0]
    return Question(node, name, f"Welcome back. Last time you told me: {one_line(said, 600)}. Has anything changed? "
                    "(tell me what, or say no)", kind="changes")


@node("listen")
def listen(state: IntakeState, runtime: Runtime[IntakeContext]) -> tuple[Update, str, str]:
    """The next reply (the script's, or the terminal's); none left ends the conversation."""
    ctx = runtime.context
    turn = state.get("attempt", 0) + 1
    source = ctx.replies or scripted(ctx.target.replies)
    reply = source(turn, Question.from_json(state["question"]).text) if turn <= ctx.max_turns else None
    if reply is None:
        ended = "the script ended" if ctx.replies is None else "the conversation ended"
        return {"out_of_replies": True}, "no reply", f"{ended} after {turn - 1} repl(ies)"
    return {"reply": reply, "attempt": turn}, "reply", one_line(reply, 100)


@node("resolve")
def resolve(state: IntakeState, runtime: Runtime[IntakeContext]) -> tuple[Update, str, str]:
    """The state resolver: every fact of the reply into the graph memory (once per turn)."""
    ctx, turn = runtime.context, state["attempt"]
    question = Question.from_json(state["question"])
    resolution = ctx.memory.turn_result(turn)  # a resumed run may have applied this turn already
    if resolution is None:
        inp = ResolverInput(state["reply"], question, ctx.target.schemas, ctx.memory.get_all_nodes_data(),
                            ctx.memory.now().date())
        resolution = ctx.roles.resolve(inp)
        ctx.memory.apply_updates(turn, question, state["reply"], resolution)
    shift = resolution.priority_shift or ""
    update: Update = {"shift": shift, "priority": [shift] if shift else [],
                      "unparsed": 0 if resolution.understood else 1}
    return update, _outcome(resolution), one_line(resolution.reasoning, 300)


def _outcome(resolution: Resolution) -> str:
    if not resolution.understood:
        return "unparsed"
    if resolution.priority_shift:
        return "priority shift"
    if resolution.conflicts_detected:
        return "conflict"
    return "answered" if resolution.answered else "other facts"


@node("decide")
def decide(state: IntakeState, runtime: Runtime[IntakeContext]) -> tuple[Update, str, str]:
    """The decision role: the next node with a reason, or done (it never sees a reply)."""
    ctx, step = runtime.context, state.get("step", 0) + 1
    decision = ctx.memory.decision(step)  # a resumed run may have made this decision already
    if decision is None:
        inp = decision_input(ctx.target, ctx.memory, state["node"], state.get("asked", []), state.get("priority", []))
        decision = ctx.roles.decide(inp)
        ctx.memory.record_decision(step, state["node"], decision)
    if decision.visited_all or decision.next_node is None:
        return {"visited_all": True, "shift": "", "step": step}, "done", one_line(decision.reason, 300)
    return {"node": decision.next_node, "step": step, "shift": ""}, decision.next_node, one_line(decision.reason, 300)


@node("finish")
def finish(state: IntakeState, runtime: Runtime[IntakeContext]) -> tuple[Update, str, str]:
    """Judge the graph, and keep it (graph.json) and the conversation (transcript.md) in the run folder."""
    ctx = runtime.context
    memory = ctx.memory
    open_conflicts = [f"{c['node']}.{c['field']}" for c in memory.conflicts(open_only=True)]
    verdict = judge(memory.get_all_nodes_data(), memory.skipped(), open_conflicts, ctx.target.schemas,
                    ctx.target.expected, tuple(memory.not_understood()))
    if ctx.artefacts is not None:
        ctx.artefacts.write(GRAPH_FILE, json.dumps(memory.export(), indent=2, ensure_ascii=False) + "\n")
        ctx.artefacts.write(TRANSCRIPT_FILE, transcript_markdown(memory.transcript()))
    ended = "the script ended first; " if state.get("out_of_replies") else ""
    detail = f"{ended}{verdict.judged}" + (f": {'; '.join(verdict.problems[:3])}" if verdict.problems else "")
    if verdict.not_understood:
        detail += f"; not understood: {', '.join(verdict.not_understood[:5])}"
    return ({"status": verdict.status, "problems": list(verdict.problems),
             "not_understood": list(verdict.not_understood)}, verdict.status, detail)


def transcript_markdown(turns: list[dict[str, object]]) -> str:
    """The conversation as a person reads it: question, reply, what was understood."""
    lines = ["# Conversation", ""]
    for turn in turns:
        question, resolution = turn["question"], turn["resolution"]
        assert isinstance(question, dict) and isinstance(resolution, dict)
        lines += [f"**{turn['turn']}. {question['node']}** — {one_line(str(question['text']), 300)}", "",
                  f"> {one_line(str(turn['reply']), 2000)}", "",
                  f"*{one_line(str(resolution['reasoning']), 1000)}*", ""]
    return "\n".join(lines)
