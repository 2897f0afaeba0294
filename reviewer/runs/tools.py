"""The agent's tools, the same for every model (EarthRecord Sec. 2.4): a shell, Python, an image viewer that reads
rendered images only, and the submit tool whose input schema is the question's answer fields.

The shell and Python run in the sample's sandbox with a clean environment (`env -i`): nothing of this process's
environment, API keys included, reaches model-written code, also in the local sandbox where that code runs on the
host as the user.
"""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.tool import ContentImage, Tool, ToolDef, ToolError, ToolParams, ToolResult, tool
from inspect_ai.util import sandbox, store

from reviewer.runs.answers import as_run_answer, submission_problems, submit_parameters

#: the sample store's keys the runs file is made from (read back from the Inspect log)
SUBMISSION = "earthrecord:submission"
REJECTED = "earthrecord:rejected"
IMAGE_VIEWS = "earthrecord:image_views"

_MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "jpeg": b"\xff\xd8\xff"}


def clean_env(path: str) -> list[str]:
    """The `env -i` prefix every command of the agent runs behind."""
    return ["env", "-i", f"PATH={path}", "HOME=.", "LANG=C.UTF-8", "MPLBACKEND=Agg", "PYTHONUNBUFFERED=1"]


def _output(result: Any) -> str:
    out = result.stdout or ""
    if result.stderr:
        out = f"{out}\n{result.stderr}" if out else result.stderr
    if not result.success:
        out = f"{out}\n(exit status {result.returncode})".lstrip("\n")
    return out or "(no output)"


async def _run_in_sandbox(path: str, argv: list[str], timeout: int, what: str, stdin: str | None = None) -> str:
    """One process in the agent's working folder with the clean environment; its output as the tool's reply."""
    try:
        result = await sandbox().exec([*clean_env(path), *argv], input=stdin, timeout=timeout)
    except TimeoutError:
        raise ToolError(f"the {what} ran longer than {timeout} s and was stopped") from None
    return _output(result)


@tool(name="bash")
def shell(path: str, timeout: int) -> Tool:
    async def execute(command: str) -> str:
        """Run a bash command in your working folder (a fresh process for each call; files you write stay).

        Args:
          command: The bash command to run.
        """
        return await _run_in_sandbox(path, ["bash", "-c", command], timeout, "command")

    return execute


@tool(name="python")
def python_tool(path: str, timeout: int) -> Tool:
    async def execute(code: str) -> str:
        """Run a Python 3 script in your working folder (a fresh process for each call: print what you need).

        Args:
          code: The Python code to run.
        """
        return await _run_in_sandbox(path, ["python3", "-"], timeout, "script", code)

    return execute


@tool
def view_image(formats: list[str], max_bytes: int) -> Tool:
    async def execute(path: str) -> ToolResult:
        """Look at an image you rendered: a PNG or JPEG file in your working folder (raster data files such as
        GeoTIFFs cannot be viewed; render them to an image first).

        Args:
          path: The image file's path, relative to your working folder.
        """
        try:
            data = await sandbox().read_file(path, text=False)
        except FileNotFoundError:
            raise ToolError(f"{path}: no such file") from None
        except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
            raise ToolError(f"{path}: cannot be read ({type(exc).__name__})") from None
        kind = next((k for k in formats if data.startswith(_MAGIC[k])), None)
        if kind is None:
            raise ToolError(f"{path}: not a rendered {' or '.join(f.upper() for f in formats)} image")
        if len(data) > max_bytes:
            raise ToolError(f"{path}: {len(data)} bytes, above the viewer's {max_bytes}; render it smaller")
        import base64

        views = store().get(IMAGE_VIEWS, 0)
        store().set(IMAGE_VIEWS, views + 1)
        mime = "image/png" if kind == "png" else "image/jpeg"
        return [ContentImage(image=f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}")]

    return execute


def submit_tool(question: dict[str, Any]) -> ToolDef:
    """The submit tool of one question: invalid submissions are refused with every reason (the agent may submit
    again within its limits); a valid one is kept in the sample's store for the runs file."""

    async def execute(**kwargs: Any) -> str:
        problems = submission_problems(question, kwargs)
        if problems:
            store().set(REJECTED, store().get(REJECTED, 0) + 1)
            raise ToolError("submission not accepted: " + "; ".join(problems))
        doc = {
            "answer": as_run_answer(question, kwargs),
            "confidence": float(kwargs["confidence"]),
            "method": kwargs["method"],
            "caveats": kwargs["caveats"],
        }
        store().set(SUBMISSION, doc)
        return json.dumps(doc["answer"], ensure_ascii=False)

    execute.__annotations__ = {"kwargs": Any, "return": str}
    return ToolDef(
        execute,
        name="submit",
        description="Submit your final answer: a value for every answer field, your confidence that the conclusion "
        "is right, and a summary of your method and its caveats.",
        parameters=ToolParams.model_validate(submit_parameters(question)),
    )
