"""Messages and tokens: the message model, tool-call pairing, token counting, offline encodings and the model registry.

Each name is imported on first use (PEP 562), so importing the package costs next to nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_face

if TYPE_CHECKING:
    from .encodings import (
        ENCODING_NAMES,
        get_encoding,
    )
    from .message import (
        ContentBlock,
        Message,
        MessageRole,
        MessageSequence,
        MessageState,
        ToolCall,
        ToolSchema,
        new_message_id,
    )
    from .registry import (
        DEFAULT_REGISTRY,
        ModelInfo,
        ModelRegistry,
        Provider,
    )
    from .tokens import (
        REPLY_PRIMING,
        TOKENS_PER_IMAGE,
        TOKENS_PER_MESSAGE,
        TOKENS_PER_NAME,
        TOKENS_PER_TOOL_CALL,
        BoundedCounter,
        Calibration,
        CharCounter,
        EstimatingCounter,
        TiktokenCounter,
        TokenCounter,
        count_request,
    )
    from .toolpairs import (
        MISSING_RESULT_TEXT,
        ToolPairProblem,
        find_tool_pair_problems,
        repair_tool_pairs,
        safe_cut_points,
        validate_tool_sequence,
    )

__all__ = [
    "DEFAULT_REGISTRY",
    "ENCODING_NAMES",
    "MISSING_RESULT_TEXT",
    "REPLY_PRIMING",
    "TOKENS_PER_IMAGE",
    "TOKENS_PER_MESSAGE",
    "TOKENS_PER_NAME",
    "TOKENS_PER_TOOL_CALL",
    "BoundedCounter",
    "Calibration",
    "CharCounter",
    "ContentBlock",
    "EstimatingCounter",
    "Message",
    "MessageRole",
    "MessageSequence",
    "MessageState",
    "ModelInfo",
    "ModelRegistry",
    "Provider",
    "TiktokenCounter",
    "TokenCounter",
    "ToolCall",
    "ToolPairProblem",
    "ToolSchema",
    "count_request",
    "find_tool_pair_problems",
    "get_encoding",
    "new_message_id",
    "repair_tool_pairs",
    "safe_cut_points",
    "validate_tool_sequence",
]

_LAZY: dict[str, str] = {
    "BoundedCounter": "tokens",
    "Calibration": "tokens",
    "CharCounter": "tokens",
    "ContentBlock": "message",
    "DEFAULT_REGISTRY": "registry",
    "ENCODING_NAMES": "encodings",
    "EstimatingCounter": "tokens",
    "MISSING_RESULT_TEXT": "toolpairs",
    "Message": "message",
    "MessageRole": "message",
    "MessageSequence": "message",
    "MessageState": "message",
    "ModelInfo": "registry",
    "ModelRegistry": "registry",
    "Provider": "registry",
    "REPLY_PRIMING": "tokens",
    "TOKENS_PER_IMAGE": "tokens",
    "TOKENS_PER_MESSAGE": "tokens",
    "TOKENS_PER_NAME": "tokens",
    "TOKENS_PER_TOOL_CALL": "tokens",
    "TiktokenCounter": "tokens",
    "TokenCounter": "tokens",
    "ToolCall": "message",
    "ToolPairProblem": "toolpairs",
    "ToolSchema": "message",
    "count_request": "tokens",
    "find_tool_pair_problems": "toolpairs",
    "get_encoding": "encodings",
    "new_message_id": "message",
    "repair_tool_pairs": "toolpairs",
    "safe_cut_points": "toolpairs",
    "validate_tool_sequence": "toolpairs",
}


__getattr__, __dir__ = lazy_face(__name__, _LAZY)
