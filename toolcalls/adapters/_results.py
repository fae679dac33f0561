"""Results back: the message or item that carries a settled call's outcome to each provider.

Each builder takes what the session yields (a ``ExecutionView``) or the tracker returns (a
``ToolCallView`` that is ``done`` or ``error``) and returns the provider's JSON as a plain dict,
ready to append to the next request. It is always JSON: a value JSON cannot hold as it is (a
``datetime``, a set, a dataclass) is written as pydantic writes it, else as its ``str``. A result
that is not a string goes as JSON text where the provider wants text; an error goes as the JSON
of ``{"error": ...}`` (the ``ToolError``'s ``kind``, ``message`` and ``details``), flagged as an
error where the provider has a flag.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic_core import to_jsonable_python

from .._execution import ExecutionView
from .._record import UNSET, ToolCallView

Settled = ExecutionView | ToolCallView


def _outcome(call: Settled) -> tuple[str, str, bool, Any]:
    """(id, tool name, succeeded, result or error as JSON data)."""
    if isinstance(call, ExecutionView):
        if call.status == "success":
            return call.tool_call_id, call.tool_name, True, call.result
        if call.status == "error" and call.error is not None:
            return call.tool_call_id, call.tool_name, False, call.error.to_dict()
        raise ValueError(f"call {call.tool_call_id} has not settled (it is {call.status})")
    if isinstance(call, ToolCallView):
        if call.status == "done":
            return call.id, call.name, True, call.result
        if call.status == "error":
            return call.id, call.name, False, call.error
        raise ValueError(f"call {call.id} has not settled (it is {call.status})")
    raise TypeError(f"expected an ExecutionView or ToolCallView, got {type(call).__name__}")


def _jsonable(value: Any) -> Any:
    """``value`` as JSON data: what JSON cannot hold as it is (a datetime, a set, a dataclass,
    a pydantic model) the way pydantic writes it, anything else as its ``str``; a number JSON
    cannot write (NaN, an infinity, an integer beyond a double's range) as ``null``, as
    ``JSON.stringify`` does. A finished call without a value (``UNSET``) has ``null``."""
    if value is UNSET:
        return None
    return _finite(to_jsonable_python(value, fallback=str))


def _finite(value: Any) -> Any:
    if type(value) is float:
        return value if math.isfinite(value) else None
    if type(value) is int:
        try:
            float(value)
        except OverflowError:
            return None
        return value
    if type(value) is list:
        return [_finite(item) for item in value]
    if type(value) is dict:
        return {key: _finite(item) for key, item in value.items()}
    return value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(_jsonable(value), ensure_ascii=False)


def _error_text(error: Any) -> str:
    return json.dumps({"error": _jsonable(error)}, ensure_ascii=False)


def _message(error: Any) -> str:
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return _text(error)


def openai_chat_tool_message(call: Settled) -> dict[str, Any]:
    """The Chat Completions ``{"role": "tool", "tool_call_id", "content"}`` message."""
    call_id, _, ok, value = _outcome(call)
    content = _text(value) if ok else _error_text(value)
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def openai_responses_output(call: Settled) -> dict[str, Any]:
    """The Responses ``function_call_output`` input item."""
    call_id, _, ok, value = _outcome(call)
    output = _text(value) if ok else _error_text(value)
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def anthropic_tool_result(call: Settled) -> dict[str, Any]:
    """The Messages ``tool_result`` content block (goes in a ``user`` message), with
    ``is_error`` set for a failed call."""
    call_id, _, ok, value = _outcome(call)
    content = _text(value) if ok else _error_text(value)
    return {"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": not ok}


def gemini_function_response(call: Settled, *, send_id: bool = True) -> dict[str, Any]:
    """The ``functionResponse`` part (wire keys): ``response`` holds ``{"output": result}`` or
    ``{"error": error}``. Pass ``send_id=False`` for a call whose id the adapter generated
    (``GeminiAdapter.function_response`` does): the model never saw that id."""
    call_id, name, ok, value = _outcome(call)
    response = {"output": _jsonable(value)} if ok else {"error": _jsonable(value)}
    body: dict[str, Any] = {"name": name, "response": response}
    if send_id:
        body["id"] = call_id
    return {"functionResponse": body}


def ai_sdk_tool_output(call: Settled) -> dict[str, Any]:
    """The UI message stream chunk: ``tool-output-available`` or ``tool-output-error``."""
    call_id, _, ok, value = _outcome(call)
    if ok:
        return {"type": "tool-output-available", "toolCallId": call_id, "output": _jsonable(value)}
    return {"type": "tool-output-error", "toolCallId": call_id, "errorText": _message(value)}
