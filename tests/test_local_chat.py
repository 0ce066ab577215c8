"""LocalChatModel on a tiny random Qwen2 built in memory (no weight files): per-row sampling and seeds,
shared generate passes, usage from ids, streaming, errors and Ctrl-C. The embedded model's runs are in
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
    passes = chat.batcher.passes
    rows = chat.batch([ASK, LONGER], temperature=1.0, seed=5, max_tokens=10, min_tokens=10)
    assert chat.batcher.passes == passes + 1
    assert rows[0].content == sampled  # row 0 keeps the call seed; the shorter prompt was left-padded
    assert [r.usage_metadata["output_tokens"] for r in rows] == [10, 10]
    # Greedy and sampled rows in one pass, from two callers at once: the greedy one is what it is alone.
    with ThreadPoolExecutor(2) as pool:
        greedy = pool.submit(chat.invoke, LONGER, temperature=0, max_tokens=10, min_tokens=10)
        pool.submit(chat.invoke, ASK, temperature=1.5, max_tokens=10, min_tokens=10)
        assert greedy.result().content == alone


def test_a_batch_is_one_pass_when_langchain_streams_each_row_too(chat):
    """Streaming callbacks (LangGraph's "messages" mode) make invoke go through _stream: still one pass."""
    passes = chat.batcher.passes
    rows = chat.batch([ASK, LONGER, ASK], stream=True, temperature=0, max_tokens=5, min_tokens=5)
    assert chat.batcher.passes == passes + 1
    assert [r.usage_metadata["output_tokens"] for r in rows] == [5, 5, 5]


def test_calls_arriving_during_a_pass_share_the_next_one(chat):
    """Three callers arrive while a first pass runs: they go through ONE more pass, not three."""
    batcher = chat.batcher

    def hold_until_three_wait(input_ids, scores):
        deadline = time.monotonic() + 10
        while len(batcher._pending) < 3 and time.monotonic() < deadline:
            time.sleep(0.005)
        return scores

    passes = batcher.passes
    with ThreadPoolExecutor(4) as pool:
        first = pool.submit(chat.invoke, ASK, temperature=0, max_tokens=3, logits_processor=[hold_until_three_wait])
        while batcher.passes == passes:
            time.sleep(0.005)
        later = [pool.submit(chat.invoke, ASK, temperature=0.7, max_tokens=4, seed=i) for i in range(3)]
        replies = [first.result(10)] + [f.result(10) for f in later]
    assert batcher.passes == passes + 2
    assert all(r.usage_metadata["output_tokens"] >= 1 for r in replies)


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_a_long_row_running_alone_pauses_for_arrivals_and_continues_as_if_uninterrupted(chat, temperature,
                                                                                     monkeypatch):
    """Three calls arrive while one long call runs alone: it pauses, all four share the next pass, and the
    long call's text is what it is when nothing interrupts it (its own generator and state carry over)."""
    batcher = chat.batcher
    options = dict(temperature=temperature, seed=21, max_tokens=40, min_tokens=40)
    alone = chat.invoke(LONGER, **options).content

    def wait_for_three_once(input_ids, scores):
        deadline = time.monotonic() + 10
        while not waited and len(batcher._pending) < 3 and time.monotonic() < deadline:
            time.sleep(0.005)
        waited.append(True)
        return scores

    model, batch_sizes, waited = chat.llm.pipeline.model, [], []
    generate = model.generate

    def recording(**kwargs):
        batch_sizes.append(kwargs["input_ids"].shape[0])
        return generate(**kwargs)

    monkeypatch.setattr(model, "generate", recording)
    passes = batcher.passes
    with ThreadPoolExecutor(4) as pool:
        long = pool.submit(chat.invoke, LONGER, logits_processor=[wait_for_three_once], **options)
        while batcher.passes == passes:
            time.sleep(0.005)
        later = [pool.submit(chat.invoke, ASK, temperature=0, max_tokens=3, min_tokens=3) for _ in range(3)]
        reply = long.result(30)
        assert [f.result(30).usage_metadata["output_tokens"] for f in later] == [3, 3, 3]
    assert reply.content == alone and reply.usage_metadata["output_tokens"] == 40
    assert batch_sizes == [1, 4]  # alone, then paused and continued WITH the three arrivals


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
