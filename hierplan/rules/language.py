"""The language a task asks its answer to be written in ("write the email in German only", "a haiku in Italian and
nothing else", "respond in French, please"), and whether an answer is in it.

Read from the task's words: a language's name after "in", where nothing but the end of the clause, "only", "and
nothing else" or "language" follows ("in Spanish cuisine" and "in German history" name no language for the answer).
A request to translate into a language asks for that language too. Checked by langdetect (a port of Google's
language-detection) on the answer's prose, only when it has LANGUAGE_MIN_WORDS words or more: on a line or two it
guesses.
"""

from __future__ import annotations

import re
from typing import Any

from hierplan.config import LANGUAGE_MIN_WORDS
from hierplan.rules.text import split_code, words

# The languages a small local model writes passably, by name, with their ISO 639-1 codes (langdetect's).
LANGUAGES = {"english": "en", "german": "de", "french": "fr", "spanish": "es", "italian": "it", "portuguese": "pt",
             "dutch": "nl", "swedish": "sv", "norwegian": "no", "danish": "da", "finnish": "fi", "polish": "pl",
             "czech": "cs", "russian": "ru", "ukrainian": "uk", "greek": "el", "turkish": "tr", "arabic": "ar",
             "hebrew": "he", "persian": "fa", "farsi": "fa", "hindi": "hi", "bengali": "bn", "urdu": "ur",
             "tamil": "ta", "telugu": "te", "marathi": "mr", "gujarati": "gu", "kannada": "kn", "punjabi": "pa",
             "nepali": "ne", "thai": "th", "vietnamese": "vi", "indonesian": "id", "korean": "ko",
             "japanese": "ja", "chinese": "zh", "mandarin": "zh", "swahili": "sw", "romanian": "ro",
             "hungarian": "hu", "bulgarian": "bg", "croatian": "hr", "slovak": "sk", "slovenian": "sl",
             "lithuanian": "lt", "latvian": "lv", "estonian": "et", "albanian": "sq", "macedonian": "mk",
             "afrikaans": "af", "tagalog": "tl", "welsh": "cy", "somali": "so"}
_NAME = r"(" + "|".join(LANGUAGES) + r")"
_AFTER = r"(?=\s*(?:[.,;:!?)\n]|$|only\b|and\s+(?:nothing|no)\b|(?:language|please)\b))"
_LANGUAGE_RES = (
    re.compile(r"\b(?:in|into)\s+(?:the\s+)?" + _NAME + r"(?:\s+language)?" + _AFTER, re.I),
    re.compile(r"\b(?:language|languages)\s*(?:is|should\s+be|must\s+be|:)\s*" + _NAME + r"\b", re.I),
    re.compile(r"\b(?:only|entirely|all|solely|wholly|using|use)\s+(?:in\s+)?(?:the\s+)?" + _NAME
               + r"(?:\s+language)?\b(?!\s+\w)", re.I),
)
# "a language other than English" names what the answer must not be in: no language to check.
_OTHER_THAN_RE = re.compile(r"\bother\s+than\s+$|\bnot\s+(?:in\s+)?$|\bexcept\s+$|\bfrom\s+$", re.I)
# "How do you say thank you in Japanese?": a question about a word, answered in the language of the question.
_ABOUT_A_WORD_RE = re.compile(r"\b(?:say|said|word|words|called|mean|means|spell|spelled|pronounce\w*)\b", re.I)


def read_language(task: str) -> dict[str, Any] | None:
    """The instruction to write the answer in one language ({"kind": "language", "language", "code"}), or None
    when the task names none, or more than one."""
    named = set()
    for pattern in _LANGUAGE_RES:
        for m in pattern.finditer(task):
            sentence = re.split(r"[.!?\n]\s", task[:m.start()])[-1]
            if not _OTHER_THAN_RE.search(task[max(0, m.start() - 20):m.start()]) \
                    and not _ABOUT_A_WORD_RE.search(sentence):
                named.add(m.group(1).lower())
    codes = {LANGUAGES[name] for name in named}
    if len(codes) != 1:
        return None
    name = sorted(named)[0]
    return {"kind": "language", "language": name.capitalize(), "code": codes.pop()}


def detected_language(text: str) -> str | None:
    """The ISO 639-1 code of ``text``'s prose by langdetect (seeded, so one text always reads the same), or None
    when it is too short to tell."""
    prose = split_code(text)[0]
    if len(words(prose)) < LANGUAGE_MIN_WORDS:
        return None
    from langdetect import DetectorFactory, detect  # lazy: its profiles load on the first call
    from langdetect.lang_detect_exception import LangDetectException

    DetectorFactory.seed = 0
    try:
        code = detect(prose)
    except LangDetectException:
        return None
    return code.split("-")[0]  # zh-cn, zh-tw


def language_problem(instruction: dict[str, Any], text: str) -> str | None:
    code = detected_language(text)
    if code is None or code == instruction["code"]:
        return None
    return (f"it is not written in {instruction['language']}: write all of it in {instruction['language']}, "
            f"no other language")
