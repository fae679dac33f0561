"""Provider adapters: real streams in, the five native events out, tool results back.

One sans-I/O adapter per source. ``feed(chunk)`` takes an SDK object or its JSON as a dict and
returns our events (dicts in the wire shape); ``finish()`` ends the stream; ``events(stream)``
wraps an SDK stream so one line runs it::

    adapter = OpenAIChatAdapter()
    async with ToolCallSession(tools) as session:
        async for settled in session.run(adapter.events(stream)):
            messages.append(openai_chat_tool_message(settled))

Every adapter treats empty argument text as ``{}``, generates deterministic ids for calls that
come without one, and ends a call that was cut off (a token limit, a failed or unfinished
stream) in ``error`` with ``kind`` ``"truncated"``: a truncated call never becomes ready. The
provider SDKs are optional: the adapters read their objects by attribute and plain dicts by key.
"""

from .._errors import InvalidChunk, StreamSuperseded
from .._record import TRUNCATED
from ._ai_sdk import AISDKAdapter
from ._anthropic import AnthropicAdapter
from ._base import Event, StreamAdapter
from ._gemini import GeminiAdapter
from ._openai_chat import OpenAIChatAdapter
from ._openai_responses import OpenAIResponsesAdapter
from ._results import (
    ai_sdk_tool_output,
    anthropic_tool_result,
    gemini_function_response,
    openai_chat_tool_message,
    openai_responses_output,
)

#: The adapter class for each ``--format`` of ``toolcalls replay`` (``native`` needs none).
ADAPTERS: dict[str, type[StreamAdapter]] = {
    "openai-chat": OpenAIChatAdapter,
    "openai-responses": OpenAIResponsesAdapter,
    "anthropic": AnthropicAdapter,
    "gemini": GeminiAdapter,
    "ai-sdk": AISDKAdapter,
}

__all__ = [
    "ADAPTERS",
    "TRUNCATED",
    "AISDKAdapter",
    "AnthropicAdapter",
    "Event",
    "GeminiAdapter",
    "InvalidChunk",
    "OpenAIChatAdapter",
    "OpenAIResponsesAdapter",
    "StreamAdapter",
    "StreamSuperseded",
    "ai_sdk_tool_output",
    "anthropic_tool_result",
    "gemini_function_response",
    "openai_chat_tool_message",
    "openai_responses_output",
]
