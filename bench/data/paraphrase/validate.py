"""Check the paraphrase files against their sources (run from anywhere: python3 validate.py)."""
import json, os, sys
HERE = os.path.dirname(os.path.abspath(__file__))
MAIN = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
SRC = os.environ.get("EVAL_SRC", "/work/shared/eval")
ROWS = [242, 247, 248, 253, 258, 259, 261, 275, 281, 294, 303, 304, 306, 312, 315, 330, 337, 342, 343, 359,
        374, 376, 378, 379, 385, 394, 397, 400, 405, 408, 413, 436, 447, 449, 452, 453, 454, 456, 461, 475]
# the fresh sample of bench/vs_instructions.py --part fresh (seed 41, validate rows the first sample did not take)
FRESH_ROWS = [244, 246, 252, 263, 266, 279, 282, 288, 289, 292, 309, 314, 319, 321, 326, 328, 339, 345, 352, 357,
              358, 371, 373, 387, 412, 414, 419, 421, 422, 430, 440, 442, 451, 464, 467, 473, 474, 476, 477, 478]
# the fresh2 sample of bench/vs_instructions.py --part fresh2 (seed 43, validate rows neither earlier sample took)
FRESH2_ROWS = [250, 254, 255, 257, 267, 269, 277, 278, 284, 290, 291, 297, 300, 302, 310, 311, 347, 351, 353, 382,
               383, 384, 389, 390, 403, 404, 411, 416, 418, 425, 427, 428, 431, 433, 444, 445, 459, 463, 468, 470]
# the fresh3 sample of bench/vs_instructions.py --part fresh3 (seed 47, validate rows none of the three earlier samples took)
FRESH3_ROWS = [241, 243, 249, 251, 256, 264, 272, 307, 308, 316, 317, 327, 332, 334, 336, 340, 341, 348, 349, 350,
               354, 356, 362, 366, 367, 370, 372, 375, 377, 380, 388, 392, 401, 410, 420, 435, 438, 462, 466, 481]
# the fresh4 sample of bench/vs_instructions.py --part fresh4 (seed 53, validate rows none of the four earlier samples took)
FRESH4_ROWS = [265, 268, 270, 271, 273, 274, 276, 285, 287, 295, 296, 301, 305, 313, 322, 323, 324, 325, 335, 338,
               346, 365, 368, 369, 381, 391, 395, 409, 423, 429, 432, 437, 439, 441, 450, 457, 458, 460, 472, 480]
# the fresh5 sample of bench/vs_instructions.py --part fresh5 (the 41 validate rows none of the five earlier samples took)
FRESH5_ROWS = [245, 260, 262, 280, 283, 286, 293, 298, 299, 318, 320, 329, 331, 333, 344, 355, 360, 361, 363, 364,
               386, 393, 396, 398, 399, 402, 406, 407, 415, 417, 424, 426, 434, 443, 446, 448, 455, 465, 469, 471, 479]
STOCK = ["double angular brackets", "markdown divider", "six asterisk", "section x", "p.p.s",
         "your entire response", "in your response, the word", "in your entire response, refrain from",
         "wrap your entire response with double quotation marks", "answer with at least", "answer with at most",
         "paragraphs are separated with the markdown divider", "do not include keywords", "include keywords",
         "highlighted section", "is it true that"]
err = []
def load(p): return [json.loads(l) for l in open(p, encoding="utf-8") if l.strip()]
def stock(text, where):
    for ph in STOCK:
        if ph in text.lower(): err.append(f"{where}: stock phrase {ph!r}")

src = open(f"{SRC}/instructions_dev.jsonl").read().splitlines()
def check_ifeval(name, rows):
    ife = load(f"{HERE}/{name}")
    if [o["row"] for o in ife] != rows: err.append(f"{name}: rows/order differ")
    for o in ife:
        w = f"{name} row {o['row']}"
        s = json.loads(src[o["row"] - 1])
        for k in ("key", "instruction_id_list", "kwargs"):
            if o[k] != s[k]: err.append(f"{w}: {k} differs")
        if o["original"] != s["prompt"]: err.append(f"{w}: original differs")
        if o["prompt"] == s["prompt"]: err.append(f"{w}: not paraphrased")
        p = o["prompt"]
        for kw in s["kwargs"]:
            if kw and "prompt_to_repeat" in kw:
                if kw["prompt_to_repeat"] not in p: err.append(f"{w}: repeat text not verbatim")
                p = p.replace(kw["prompt_to_repeat"], "")  # verbatim source text is exempt from the stock check
        if "detectable_content:postscript" in s["instruction_id_list"]:
            m = [kw for kw in s["kwargs"] if kw and "postscript_marker" in kw][0]["postscript_marker"]
            if m not in p: err.append(f"{w}: marker {m} missing")
            p = p.replace(m, "")  # the row's own marker (e.g. P.P.S) must appear as is
        stock(p, w)
        for kw in s["kwargs"]:
            if kw and "end_phrase" in kw and kw["end_phrase"] not in p: err.append(f"{w}: end phrase missing")
    return ife
ife = check_ifeval("ifeval_validate.jsonl", ROWS)
fresh = check_ifeval("ifeval_fresh.jsonl", FRESH_ROWS)
fresh2 = check_ifeval("ifeval_fresh2.jsonl", FRESH2_ROWS)
fresh3 = check_ifeval("ifeval_fresh3.jsonl", FRESH3_ROWS)
fresh4 = check_ifeval("ifeval_fresh4.jsonl", FRESH4_ROWS)
fresh5 = check_ifeval("ifeval_fresh5.jsonl", FRESH5_ROWS)

g = open(f"{SRC}/gsm8k_dev100.jsonl").read().splitlines()
gs = load(f"{HERE}/gsm8k_validate.jsonl")
if [o["row"] for o in gs] != list(range(41, 61)): err.append("gsm8k rows differ")
for o in gs:
    s = json.loads(g[o["row"] - 1])
    if o["answer"] != s["answer"]: err.append(f"gsm8k row {o['row']}: answer differs")
    if o["original"] != s["question"]: err.append(f"gsm8k row {o['row']}: original differs")
    if o["question"] == s["question"]: err.append(f"gsm8k row {o['row']}: not paraphrased")
    stock(o["question"], f"gsm8k row {o['row']}")

ws = load(f"{MAIN}/hierplan/eval/data/writing20.jsonl")
wp = load(f"{HERE}/writing.jsonl")
if len(wp) != 20 or len(ws) != 20: err.append("writing: not 20 lines")
for i, (o, s) in enumerate(zip(wp, ws), 1):
    if o["requirements"] != s["requirements"]: err.append(f"writing {i}: requirements differ")
    if o["original"] != s["question"]: err.append(f"writing {i}: original differs")
    if o["question"] == s["question"]: err.append(f"writing {i}: not paraphrased")
    stock(o["question"], f"writing {i}")
    for r in s["requirements"]:
        if r["kind"] == "starts_with" and r["text"] not in o["question"]: err.append(f"writing {i}: begin text missing")
print(f"ifeval {len(ife)}, ifeval fresh {len(fresh)}, ifeval fresh2 {len(fresh2)}, ifeval fresh3 {len(fresh3)}, ifeval fresh4 {len(fresh4)}, ifeval fresh5 {len(fresh5)}, gsm8k {len(gs)}, writing {len(wp)}")
print("\n".join(err) if err else "all checks pass")
sys.exit(1 if err else 0)
