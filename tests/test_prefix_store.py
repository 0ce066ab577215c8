"""Prompt prefixes computed once (prefix_store.py, decode.py): a row on top of stored chunks computes what it
computes prefilled whole, a seeded call gives the same text whether its chunks were stored or not, a run's
next call reuses the chunks of its last one, and the store keeps to its memory."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

torch = pytest.importorskip("torch")

from hierplan.models.prefix_store import MIN_CHUNK_TOKENS, PrefixStore, chunk_bounds  # noqa: E402
from test_local_chat import chat  # noqa: E402,F401  (the tiny in-memory model)

SYSTEM = SystemMessage("You are a system. " + "hello world, what is user assistant system? " * 12)
OTHER = SystemMessage("hello world " * 30 + "It is 5.")
EXAMPLE = [HumanMessage("What is 2+3? " * 12), AIMessage("It is 5. " * 12)]


def conversations():
    return [
        [SYSTEM, *EXAMPLE, HumanMessage("What is 2+3?")],
        [SYSTEM, *EXAMPLE, HumanMessage("hello world, what is 2+3?")],  # same chunks, other last message
        [OTHER, HumanMessage("What is user assistant?")],                # other chunks
        [HumanMessage("What is 2+3?")],                                   # none
    ]


@pytest.fixture
def store(chat):  # noqa: F811
    fresh = PrefixStore()
    chat._prefixes = fresh
    yield fresh
    chat._prefixes = PrefixStore()


def greedy(chat, inputs, **kwargs):  # noqa: F811
    return [m.content for m in chat.batch(inputs, temperature=0, max_tokens=10, min_tokens=10, **kwargs)]


def test_rows_get_chunk_bounds_at_message_boundaries(chat):  # noqa: F811
    messages = conversations()[0]
    ids = chat._prompt_ids(messages)
    bounds = chat._prefix_bounds(messages, ids)
    assert len(bounds) >= 2 and bounds[-1] < len(ids)
    assert all(b - a >= MIN_CHUNK_TOKENS for a, b in zip((0, *bounds), bounds))
    # each bound is where a rendering of the messages before it ends
    system_only = chat._prompt_ids(messages[:1], prompt=False)
    assert bounds[0] == len(system_only) and ids[:bounds[0]] == system_only
    assert chat._prefix_bounds(messages[-1:], chat._prompt_ids(messages[-1:])) == ()


def test_rows_on_stored_chunks_compute_what_whole_prefills_do(chat, store):  # noqa: F811
    chat._prefixes = None  # every row prefilled whole
    whole = greedy(chat, conversations())
    chat._prefixes = store
    first = greedy(chat, conversations())  # chunks computed, then reused within the batch
    assert store.computed >= 3 and store.hits >= 1
    again = greedy(chat, conversations())  # every chunk found
    assert first == whole and again == whole


def test_a_seeded_call_gives_the_same_text_with_its_chunks_computed_or_found(chat, store):  # noqa: F811
    messages = conversations()[0]

    def draw():
        return chat.invoke(messages, temperature=1.0, seed=4, max_tokens=12, min_tokens=12).content

    computed = draw()
    assert store.computed >= 2 and store.hits == 0
    assert draw() == computed and store.hits >= 2


def test_a_longer_conversation_reuses_the_chunks_of_the_one_before(chat, store):  # noqa: F811
    messages = conversations()[0]
    reply = chat.invoke(messages, temperature=0, max_tokens=10)
    computed = store.computed
    longer = [*messages, AIMessage(reply.content + " It is 5. " * 10), HumanMessage("And 3+4?")]
    chat.invoke(longer, temperature=0, max_tokens=10)
    chunks = len(chat._prefix_bounds(longer, chat._prompt_ids(longer)))
    assert chunks > computed and store.computed == chunks  # the first call's chunks found, only the new ones made


def test_the_store_keeps_to_its_memory_dropping_the_least_recently_used():
    def layers(tokens):
        return [(torch.zeros(1, 2, tokens, 4), torch.zeros(1, 2, tokens, 4))]  # 2 * 2*tokens*4 floats

    size = 2 * 2 * 10 * 4 * 4  # bytes of layers(10)
    store = PrefixStore(max_bytes=2 * size)
    store.put((1,), layers(10))
    store.put((2,), layers(10))
    assert store.get((1,)) is not None  # (1,) is now the most recently used
    store.put((3,), layers(10))
    assert store.get((2,)) is None and store.get((1,)) is not None and store.get((3,)) is not None
    assert store.bytes == 2 * size and len(store) == 2
    store.put((4,), layers(30))  # larger than the whole store: not kept
    assert store.get((4,)) is None and len(store) == 2


def test_chunks_end_at_the_first_boundary_far_enough_from_the_last():
    assert chunk_bounds([10, MIN_CHUNK_TOKENS + 5, MIN_CHUNK_TOKENS + 20, 3 * MIN_CHUNK_TOKENS], 1000) == \
        (MIN_CHUNK_TOKENS + 5, 3 * MIN_CHUNK_TOKENS)
    assert chunk_bounds([MIN_CHUNK_TOKENS, 2 * MIN_CHUNK_TOKENS], 2 * MIN_CHUNK_TOKENS) == (MIN_CHUNK_TOKENS,)
