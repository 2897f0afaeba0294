"""The agent and the tasks: Inspect's react() loop with the shell, Python, the image viewer and the question's submit
tool, the same system prompt for every model; one Task per condition with the passes as epochs and the run limits
of EarthRecord Sec. 2.4; a scorer that judges the conclusion as `reviewer score` does, for `inspect view`.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai import Epochs, Task
from inspect_ai.agent import AgentPrompt, AgentSubmit, as_solver, react
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import sandbox

from reviewer.bank.io import Bank
from reviewer.runs.config import agent_prompt, settings
from reviewer.runs.sandbox import link_record, sample_sandbox
from reviewer.runs.tasks import Unit, question_input
from reviewer.runs.tools import SUBMISSION, python_tool, shell, submit_tool, view_image
from reviewer.scoring.judge import Judge

#: PATH inside a container; the local sandbox puts this Python's folder first (numpy, rasterio, matplotlib)
CONTAINER_PATH = "/opt/venv/bin:/usr/local/bin:/usr/bin:/bin"


def local_path() -> str:
    return f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class Limits:
    passes: int
    minutes: float
    messages: int


@solver
def earthrecord_agent(condition: str, sandbox_kind: str) -> Solver:
    """The agent of one run: the record linked in (local sandbox), then react() until a valid submission."""
    s = settings()
    prompt = agent_prompt()
    path = local_path() if sandbox_kind == "local" else CONTAINER_PATH
    timeout = int(s["tool_timeout_s"])

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        md = state.metadata
        if md.get("record_dir") and sandbox_kind == "local":
            workdir = (await sandbox().exec(["pwd"])).stdout.strip()
            link_record(Path(md["record_dir"]), Path(workdir))
        question = {"fields": md["fields"], "conclusion": md["conclusion"]}
        agent = react(
            prompt=AgentPrompt(
                instructions=prompt.system_for(condition),
                handoff_prompt=None,
                assistant_prompt=None,
                submit_prompt=None,
            ),
            tools=[
                shell(path, timeout),
                python_tool(path, timeout),
                view_image(list(s["image_formats"]), int(s["max_image_bytes"])),
            ],
            submit=AgentSubmit(tool=submit_tool(question), answer_only=True, keep_in_messages=True),
            on_continue=prompt.continue_text,
        )
        return await as_solver(agent)(state, generate)

    return solve


@scorer(metrics=[accuracy()])
def conclusion(bank_sha256: str) -> Any:
    """Right or wrong on the conclusion field, as `reviewer score` judges one run (for `inspect view`; the scores
    of record come from `reviewer score` on runs.jsonl)."""
    judges: dict[str, Judge] = _JUDGES.get(bank_sha256, {})

    async def score(state: TaskState, target: Target) -> Score:
        sub = state.store.get(SUBMISSION)
        if sub is None:
            return Score(value=INCORRECT, explanation="no valid answer submitted")
        verdict = judges[state.metadata["question"]](sub["answer"])
        return Score(
            value=CORRECT if verdict.right else INCORRECT,
            answer=json.dumps(sub["answer"][state.metadata["conclusion"]], ensure_ascii=False),
            explanation="insufficient evidence" if verdict.abstained else None,
        )

    return score


#: the bank's judges by the bank's sha256 (the scorer's argument stays a short string in the log)
_JUDGES: dict[str, dict[str, Judge]] = {}


def sample_of(unit: Unit, site: dict[str, Any], sandbox_kind: str, work: Path, records_root: Path | None) -> Sample:
    q = unit.question
    return Sample(
        id=unit.sample_id,
        input=question_input(q, site),
        metadata={
            "question": q["id"],
            "condition": unit.condition,
            "pair": unit.pair,
            "site": q["site"],
            "fields": q["fields"],
            "conclusion": q["conclusion"],
            "record_dir": str(unit.record) if unit.record else None,
        },
        sandbox=sample_sandbox(sandbox_kind, unit.record, work / "sandbox", records_root),
    )


def make_task(
    bank: Bank,
    condition: str,
    units: list[Unit],
    *,
    sandbox_kind: str,
    limits: Limits,
    work: Path,
    records_root: Path | None = None,
) -> Task:
    """The Inspect task of one condition of the bank."""
    _JUDGES[bank.sha256] = {q["id"]: Judge(q) for q in bank.questions}
    prompt = agent_prompt()
    samples = [sample_of(u, bank.site(u.question["site"]), sandbox_kind, work, records_root) for u in units]
    return Task(
        name=f"earthrecord_{condition}",
        dataset=MemoryDataset(samples, name=f"{bank.name}-{bank.version}"),
        solver=earthrecord_agent(condition, sandbox_kind),
        scorer=conclusion(bank.sha256),
        epochs=Epochs(limits.passes),
        message_limit=limits.messages,
        working_limit=int(limits.minutes * 60),
        version=prompt.version,
        metadata={
            "bank": {"name": bank.name, "version": bank.version, "sha256": bank.sha256, "frozen": bank.frozen},
            "condition": condition,
            "prompt": {"version": prompt.version, "sha256": prompt.sha256},
            "sandbox": sandbox_kind,
        },
    )
