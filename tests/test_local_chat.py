"""LocalChatModel on a tiny random Qwen2 built in memory (no weight files): per-row sampling and seeds,
one running batch that rows join and leave, usage from ids, streaming, errors and Ctrl-C. The embedded model's runs are in
test_models.py / test_constrained.py / test_real_run.py."""

from __future__ import annotations

import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from langchain_core.messages import HumanMessage

torch = pytest.importorskip("torch")

CHATML = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + "
    "'<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
ASK = [HumanMessage("What is 2+3?")]
LONGER = [HumanMessage("hello world, what is 2+3 and what is user assistant system? hello world")]


@pytest.fixture(scope="module")
def chat():
    from langchain_huggingface import HuggingFacePipeline
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM, pipeline

    from hierplan.models.local_chat import LocalChatModel

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    backend.train_from_iterator(["What is 2+3? It is 5.", "user assistant system", "hello world"] * 5, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|im_end|>",
                                        pad_token="<|endoftext|>", chat_template=CHATML)
    tokenizer.padding_side = "left"
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    model = Qwen2ForCausalLM(config).eval()
    pipe = pipeline("text-generation", model=model, tokenizer=tokenizer)
    return LocalChatModel(llm=HuggingFacePipeline(pipeline=pipe), model_id="tiny", max_tokens=12)


def test_usage_counts_the_ids_fed_and_generated(chat):
    reply = chat.invoke(ASK, max_tokens=9, temperature=0, min_tokens=9)
    prompt = chat.tokenizer.apply_chat_template([{"role": "user", "content": "What is 2+3?"}], tokenize=False,
                                                add_generation_prompt=True)
    assert reply.usage_metadata == {"input_tokens": len(chat.tokenizer(prompt)["input_ids"]),
                                    "output_tokens": 9, "total_tokens": reply.usage_metadata["input_tokens"] + 9}
    assert reply.response_metadata["finish_reason"] == "length" and reply.response_metadata["model_name"] == "tiny"


def test_a_seeded_call_draws_the_same_and_another_seed_draws_differently(chat):
    def draw(seed):
        return chat.invoke(ASK, temperature=1.0, top_p=1.0, seed=seed, max_tokens=12, min_tokens=12).content

    assert draw(3) == draw(3)
    assert len({draw(3), draw(4), draw(5)}) > 1


def test_bound_sampling_reaches_the_model(chat):
    assert chat.bind(temperature=1.0, seed=11, max_tokens=12, min_tokens=12).invoke(ASK).content == \
        chat.invoke(ASK, temperature=1.0, seed=11, max_tokens=12, min_tokens=12).content


def test_batch_is_one_pass_and_each_row_keeps_its_own_sampling(chat):
    alone = chat.invoke(LONGER, temperature=0, max_tokens=10, min_tokens=10).content
    sampled = chat.invoke(ASK, temperature=1.0, seed=5, max_tokens=10, min_tokens=10).content
    prefills = chat.batcher.prefills
    rows = chat.batch([ASK, LONGER], temperature=1.0, seed=5, max_tokens=10, min_tokens=10)
    assert chat.batcher.prefills == prefills + 1
    assert rows[0].content == sampled  # row 0 keeps the call seed; the shorter prompt was left-padded
    assert [r.usage_metadata["output_tokens"] for r in rows] == [10, 10]
    # Greedy and sampled rows in one pass, from two callers at once: the greedy one is what it is alone.
    with ThreadPoolExecutor(2) as pool:
        greedy = pool.submit(chat.invoke, LONGER, temperature=0, max_tokens=10, min_tokens=10)
        pool.submit(chat.invoke, ASK, temperature=1.5, max_tokens=10, min_tokens=10)
        assert greedy.result().content == alone


def test_a_batch_is_one_pass_when_langchain_streams_each_row_too(chat):
    """Streaming callbacks (LangGraph's "messages" mode) make invoke go through _stream: still one pass."""
    prefills = chat.batcher.prefills
    rows = chat.batch([ASK, LONGER, ASK], stream=True, temperature=0, max_tokens=5, min_tokens=5)
    assert chat.batcher.prefills == prefills + 1
    assert [r.usage_metadata["output_tokens"] for r in rows] == [5, 5, 5]


def _hold_once_until_waiting(batcher, n):
    """A logits processor that, at its first token only, holds until ``n`` requests wait (10 s at most)."""
    held: list = []

    def hold(input_ids, scores):
        deadline = time.monotonic() + 10
        while not held and len(batcher._pending) < n and time.monotonic() < deadline:
            time.sleep(0.005)
        held.append(True)
        return scores

    return hold


def test_calls_arriving_while_a_row_decodes_join_it_in_one_prefill(chat):
    """Three callers arrive while a first call decodes: one prefill admits all three, and they decode in the
    same steps as the first call's row."""
    batcher = chat.batcher
    prefills, batcher.widest = batcher.prefills, 0
    with ThreadPoolExecutor(4) as pool:
        first = pool.submit(chat.invoke, ASK, temperature=0, max_tokens=4, min_tokens=4,
                            logits_processor=[_hold_once_until_waiting(batcher, 3)])
        while batcher.prefills == prefills:
            time.sleep(0.005)
        later = [pool.submit(chat.invoke, ASK, temperature=0.7, max_tokens=4, seed=i) for i in range(3)]
        replies = [first.result(10)] + [f.result(10) for f in later]
    assert batcher.prefills == prefills + 2
    assert batcher.widest == 4
    assert all(r.usage_metadata["output_tokens"] >= 1 for r in replies)


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_a_long_row_running_alone_takes_arrivals_in_and_continues_as_if_uninterrupted(chat, temperature):
    """Three calls arrive while one long call runs alone: they join its steps without a new prefill of the
    long row, and the long call's text is what it is when nothing joins (its cache, generator and state are
    kept; padding the merged cache changes nothing it computes)."""
    batcher = chat.batcher
    options = dict(temperature=temperature, seed=21, max_tokens=40, min_tokens=40)
    alone = chat.invoke(LONGER, **options).content
    prefills, batcher.widest = batcher.prefills, 0
    with ThreadPoolExecutor(4) as pool:
        long = pool.submit(chat.invoke, LONGER, logits_processor=[_hold_once_until_waiting(batcher, 3)], **options)
        while batcher.prefills == prefills:
            time.sleep(0.005)
        later = [pool.submit(chat.invoke, ASK, temperature=0, max_tokens=3, min_tokens=3) for _ in range(3)]
        reply = long.result(30)
        assert [f.result(30).usage_metadata["output_tokens"] for f in later] == [3, 3, 3]
    assert reply.content == alone and reply.usage_metadata["output_tokens"] == 40
    assert batcher.prefills == prefills + 2 and batcher.widest == 4  # alone, then WITH the three arrivals


def test_a_finished_row_leaves_the_batch_at_once(chat):
    """A 2-token row and a 20-token row in one batch: after the short one ends, steps carry one row only."""
    batcher = chat.batcher
    steps, row_steps = batcher.steps, batcher.row_steps
    replies = _batch_with_budgets(chat, [(ASK, 2), (LONGER, 20)])
    assert [r.usage_metadata["output_tokens"] for r in replies] == [2, 20]
    # The prefill gives each row its first token; every later token is one decode step.
    assert batcher.steps - steps == 19
    assert batcher.row_steps - row_steps == 2 + 18  # generate() would have run 2 rows in all 19 steps (38)


def test_a_row_left_alone_beside_a_wide_padding_gives_what_it_gives_alone(chat):
    """A short prompt batched with a much longer one: once the long row ends, the padding columns only the
    long row needed are cut from the cache (decode.COMPACT_MIN_COLUMNS), and the short row goes on unchanged."""
    from hierplan.models.decode import COMPACT_MIN_COLUMNS

    huge = [HumanMessage(" ".join(["hello world"] * (COMPACT_MIN_COLUMNS + 20)))]
    alone = chat.invoke(ASK, temperature=0, max_tokens=30, min_tokens=30).content
    replies = _batch_with_budgets(chat, [(huge, 2), (ASK, 30)])
    assert replies[1].content == alone and replies[1].usage_metadata["output_tokens"] == 30


def _batch_with_budgets(chat, inputs):
    """[(messages, budget)] in one prefill (as ``batch`` hands rows in), each row greedy with its own budget."""
    from hierplan.models.batcher import Gather
    from hierplan.models.local_chat import _GATHER

    gather = Gather(len(inputs), chat.batcher)

    def one(index):
        _GATHER.set((gather, index))
        messages, budget = inputs[index]
        try:
            return chat.invoke(messages, temperature=0, max_tokens=budget, min_tokens=budget)
        finally:
            gather.give(index, None)

    prefills = chat.batcher.prefills
    with ThreadPoolExecutor(len(inputs)) as pool:
        replies = list(pool.map(one, range(len(inputs))))
    assert chat.batcher.prefills == prefills + 1
    return replies


def test_streaming_yields_the_text_as_it_comes_and_usage_once(chat):
    whole = chat.invoke(ASK, temperature=0, max_tokens=12, min_tokens=12)
    chunks = list(chat.stream(ASK, temperature=0, max_tokens=12, min_tokens=12))
    assert sum(1 for c in chunks if c.content) > 1
    assert "".join(c.content for c in chunks) == whole.content
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    assert total.usage_metadata == whole.usage_metadata


def test_a_failing_pass_raises_in_its_caller_and_the_model_keeps_serving(chat):
    def broken(input_ids, scores):
        raise RuntimeError("grammar broke")

    with pytest.raises(RuntimeError, match="grammar broke"):
        chat.invoke(ASK, logits_processor=[broken])
    assert chat.invoke(ASK, temperature=0, max_tokens=2, min_tokens=2).usage_metadata["output_tokens"] == 2


def test_unknown_options_are_refused(chat):
    with pytest.raises(TypeError, match="frequency_penalty"):
        chat.invoke(ASK, frequency_penalty=1.0)


def test_ctrl_c_while_waiting_ends_the_callers_row(chat):
    def slow(input_ids, scores):
        time.sleep(0.01)
        return scores

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        with pytest.raises(KeyboardInterrupt):
            chat.invoke(ASK, max_tokens=400, min_tokens=400, logits_processor=[slow])  # ~4 s if not stopped
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    start = time.monotonic()
    chat.invoke(ASK, max_tokens=1)  # queued behind the abandoned pass
    assert time.monotonic() - start < 2, "the abandoned row kept generating"


def test_a_batch_whose_input_fails_early_does_not_hang_the_others(chat):
    done = threading.Event()
    out = []

    def run():
        out.append(chat.batch([ASK, object(), ASK], max_tokens=2, return_exceptions=True))
        done.set()

    threading.Thread(target=run, daemon=True).start()
    assert done.wait(20), "the batch waited forever for the input that failed"
    assert isinstance(out[0][1], Exception) and out[0][0].usage_metadata["output_tokens"] >= 1


def test_the_cache_grows_in_place_through_the_model_forward(chat):
    """The adapter's GrowingLayer (decode.py) subclasses transformers' DynamicLayer: the model's attention must
    reach its update (keys stay views of the buffer, written in place), or rows would be selected from a stale
    buffer. Fails if transformers stops calling the layer's update or changes DynamicLayer's fields."""
    from hierplan.models import torch_thread
    from hierplan.models.decode import GROW_COLUMNS, RunningBatch
    from hierplan.models.rows import Row

    def run():
        batch = RunningBatch(chat.llm.pipeline.model, {chat.tokenizer.eos_token_id}, chat.tokenizer.pad_token_id)
        with torch.inference_mode():  # as the batcher runs it
            batch.add([Row(ids=[5, 6, 7], max_new_tokens=50, min_new_tokens=50),
                       Row(ids=[8, 9], max_new_tokens=50, min_new_tokens=50)])
            for _ in range(4):
                batch.step()
        return batch

    batch = torch_thread.run(run)
    assert batch.can_join
    for layer in batch.cache.layers:
        assert layer.keys.shape[2] == 3 + 4 and layer.key_buffer.shape[2] == 3 + GROW_COLUMNS
        assert layer.keys.data_ptr() == layer.key_buffer.data_ptr()
        assert layer.values.data_ptr() == layer.value_buffer.data_ptr()


class Cycle:
    """A logits processor that makes the model write ``ids`` over and over."""

    def __init__(self, ids: list[int]):
        self.ids, self.calls = ids, 0

    def __call__(self, input_ids, scores):
        token = self.ids[self.calls % len(self.ids)]
        self.calls += 1
        scores[:] = float("-inf")
        scores[0, token] = 0.0
        return scores


def test_a_reply_that_loops_ends_at_the_third_time_of_its_line(chat):
    line = chat.tokenizer.encode("hello world user assistant system\n", add_special_tokens=False)
    reply = chat.invoke(ASK, max_tokens=100, temperature=0, logits_processor=[Cycle(line)], stop_repeated_lines=3)
    assert reply.response_metadata["finish_reason"] == "repetition"
    assert reply.content == "hello world user assistant system\n" * 3
    assert reply.usage_metadata["output_tokens"] == 3 * len(line)
    # Without the option the same loop runs to the budget.
    reply = chat.invoke(ASK, max_tokens=100, temperature=0, logits_processor=[Cycle(line)])
    assert reply.response_metadata["finish_reason"] == "length" and reply.usage_metadata["output_tokens"] == 100
