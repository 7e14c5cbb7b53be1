"""Which vendor's model a spec reaches, so an author and its reviewer can be told apart.

The vendor is the model's author when the model id names one
(``openrouter/anthropic/claude-haiku-4.5`` reaches anthropic), else the author of a
well-known model family (``ollama/llama3.1`` reaches meta), else the backend's own
vendor (``claude-cli/...`` reaches anthropic). A Claude CLI author and an Anthropic
model over OpenRouter are therefore correlated, which is what a verifier must avoid.
The scripted ``mock/`` double is GraphARC's own, whatever name it is given. This lives
in core beside the spec grammar it reads, so core's demo CLI can warn about a correlated
pair; grapharc-gateway re-exports it.
"""

from __future__ import annotations

import re

from grapharc.models.spec import resolve_backend

SCRIPTED_VENDOR = "grapharc"

AUTHOR_ALIASES = {
    "meta-llama": "meta",
    "facebook": "meta",
    "mistralai": "mistral",
    "x-ai": "xai",
    "qwen": "alibaba",
    "deepseek-ai": "deepseek",
    "z-ai": "zhipu",
    "thudm": "zhipu",
    "zai-org": "zhipu",
    "moonshot": "moonshotai",
}

FAMILIES = (
    (re.compile(r"^(gpt-|chatgpt|o\d)"), "openai"),
    (re.compile(r"^claude"), "anthropic"),
    (re.compile(r"^(llama|codellama)"), "meta"),
    (re.compile(r"^(gemini|gemma)"), "google"),
    (re.compile(r"^(mistral|mixtral|codestral|ministral|magistral|devstral)"), "mistral"),
    (re.compile(r"^(qwen|qwq)"), "alibaba"),
    (re.compile(r"^deepseek"), "deepseek"),
    (re.compile(r"^phi"), "microsoft"),
    (re.compile(r"^grok"), "xai"),
    (re.compile(r"^command"), "cohere"),
    (re.compile(r"^kimi"), "moonshotai"),
    (re.compile(r"^glm"), "zhipu"),
)


def model_author(model: str) -> str | None:
    """The author a model id names (``anthropic/claude-x``) or implies by family, if any."""
    name = model.strip().lower()
    author, slash, _ = name.partition("/")
    if slash and author:
        return AUTHOR_ALIASES.get(author, author)
    for pattern, vendor in FAMILIES:
        if pattern.match(name):
            return vendor
    return None


def vendor_of(spec: str) -> str:
    """The vendor whose model ``spec`` reaches (raises on a bad or unknown spec)."""
    resolved = resolve_backend(spec)
    if resolved.info.vendor == SCRIPTED_VENDOR:
        return SCRIPTED_VENDOR
    return model_author(resolved.model) or resolved.info.vendor


def different_providers(a: str, b: str) -> bool:
    """True when specs ``a`` and ``b`` reach different vendors, so agreement is independent."""
    return vendor_of(a) != vendor_of(b)
