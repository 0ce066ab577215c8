"""An answer template the task spells (a label written before a placeholder in square brackets, "@mean_age[age]",
"#total_cost[value]"), and a program's printed answer put into it: the label kept, the value between the brackets.

A program asked for that form mostly prints it, but a small model's program also prints "@mean_age 34.5",
"mean_age: 34.5" or a Python list inside the brackets ("@ids[[3, 7]]"). The values are what the programs voted on;
only the brackets and the label around them change. Pure functions of the task and the output: nothing here knows
a data set.
"""

from __future__ import annotations

import re

# A template: a label (a sigil such as @ or # before a word, or a word joined by underscores) directly before a
# placeholder in square brackets that is no index and no quoted key ("df['x']", "row[0]" are code, not templates).
_TEMPLATE_RE = re.compile(r"(?<![\w\]])([@#$%&]?)([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*)\[([^\[\]'\"\n]{1,80})\]")


def templates(task: str) -> list[str]:
    """The labels the task spells before a placeholder in brackets, in order, each once ("@mean_age")."""
    found: list[str] = []
    for m in _TEMPLATE_RE.finditer(task):
        sigil, name, placeholder = m.groups()
        if placeholder.strip().isdigit() or (not sigil and "_" not in name):
            continue
        if sigil + name not in found:
            found.append(sigil + name)
    return found


def fit_template(task: str, output: str) -> str:
    """``output`` with each value the task's templates label put between the template's brackets: "@x 1.5",
    "@x: 1.5", "x = 1.5" (the label without its sigil) become "@x[1.5]"; a list printed inside the brackets,
    "@x[[1, 2]]" or "@x[]" printed as "@x []", becomes "@x[1, 2]" and "@x[]". An output without the task's
    labels, or already in the form, is returned unchanged."""
    labels = templates(task)
    if not labels:
        return output
    other_label = "|".join(re.escape(label) for label in labels)
    ends = rf"(?=[ \t]*,?[ \t]*(?:{other_label}|\n|$))"  # the line's end, or the next label (a comma before it)
    after_colon = rf"(?P<value>\[[^\[\]\n]*\]|[^\[\n]+?){ends}"  # "@x: 1.5", "@x = a list of words"
    after_space = rf"(?P<value>\[[^\[\]\n]*\]|[^\[\s,]+){ends}"  # "@x 1.5": one value ("@x is 1.5" is prose)
    for label in labels:
        name = label.lstrip("@#$%&")
        written = rf"(?<![\w@#$%&]){re.escape(label)}(?!\w)"
        bare = rf"(?<![\w@#$%&]){re.escape(name)}(?!\w)"

        def bracketed(m: re.Match, label: str = label) -> str:
            return f"{label}[{_unlisted(m.group('value'))}]"

        # a list printed inside the brackets: its own brackets go
        output = re.sub(written + r"[ \t]*\[[ \t]*\[([^\[\]\n]*)\][ \t]*\]",
                        lambda m, label=label: f"{label}[{m.group(1)}]", output)
        output = re.sub(written + rf"[ \t]*[:=][ \t]*{after_colon}", bracketed, output)
        output = re.sub(written + rf"[ \t]+{after_space}", bracketed, output)
        if name != label:  # the label printed without its sigil, a colon or an equals sign before its value
            output = re.sub(bare + rf"[ \t]*[:=][ \t]*{after_colon}", bracketed, output)
    return output


def _unlisted(value: str) -> str:
    value = value.strip().rstrip(",").strip()
    return value[1:-1].strip() if value.startswith("[") and value.endswith("]") else value
