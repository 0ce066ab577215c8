"""The held-out tools-and-data set (hierplan/eval/data/heldout10.jsonl): a made-up town library, another domain,
other wording and other tools than tools15, on which the agent's prompts were tuned. Every expected answer is
recomputed here from the files (csv, json) and the MCP server's own tool functions, so the set cannot drift
from them; and every task loads, its files found, as `hierplan eval` loads it.
"""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

from eval_sets import DATA, EvalSet
from hierplan.eval import load_tasks

HELDOUT10 = EvalSet("heldout10")
TASKS, FILES = HELDOUT10.tasks, HELDOUT10.files
TOOLS = {"member_lookup", "late_fee_rule", "branch_contact"}
task_lines, server_module, rows, document = HELDOUT10.lines, HELDOUT10.server, HELDOUT10.rows, HELDOUT10.document


# --- the data set cannot drift from its files and its server -------------------------------------------------


def computed_answers(server) -> dict:
    """Each task's answer, computed here from the files (csv, json) and the server's own tool functions."""
    loans, shifts, returns = rows("loans.csv"), rows("volunteer_shifts.csv"), rows("late_returns.csv")
    branches, on_loan = document("branches.json"), document("on_loan.json")
    hours = defaultdict(float)
    for shift in shifts:
        hours[shift["volunteer"]] += float(shift["hours"])
    [harrowgate] = [b for b in branches["branches"] if b["name"] == "Harrowgate"]

    def limit(card: str) -> int:
        found = re.fullmatch(rf"Card {card}: .+; may have up to (\d+) items on loan at once",
                             server.member_lookup(card))
        return int(found.group(1))

    def fee(item: str, tier: str) -> float:
        found = re.fullmatch(rf"Late fee, {item} on a {tier} card: EUR ([\d.]+) per day late",
                             server.late_fee_rule(item, tier))
        return float(found.group(1))

    def head_librarian(branch: str) -> str:
        found = re.fullmatch(rf"{branch} branch: head librarian (.+); closed on \w+", server.branch_contact(branch))
        return found.group(1)

    # What the questions take as given: no loan kept exactly three weeks (so "longer than" is not ambiguous), one
    # volunteer clearly ahead, and on_loan.json is card FENNEL-MOSS's.
    assert all(int(r["days_kept"]) != 21 for r in loans)
    first, second = sorted(hours.values(), reverse=True)[:2]
    assert first - second >= 1
    assert on_loan["card"] == "FENNEL-MOSS"
    return {
        "loans-millbrook-days": sum(int(r["days_kept"]) for r in loans if r["branch"] == "Millbrook"),
        "librarian-eastwick": head_librarian("Eastwick"),
        "volunteer-most-hours": max(hours, key=hours.get),
        "limit-amber-wick": limit("AMBER-WICK"),
        "late-dvds-standard": sum(int(r["days_late"]) for r in returns if r["item_type"] == "dvd")
                              * fee("dvd", "standard"),
        "loans-over-three-weeks": sum(1 for r in loans if int(r["days_kept"]) > 3 * 7),
        "fee-audiobook-senior": fee("audiobook", "senior"),
        "harrowgate-seats": sum(room["seats"] for room in harrowgate["rooms"]),
        "fine-student-dvd": 9 * fee("dvd", "student"),
        "fennel-moss-room-left": limit("FENNEL-MOSS") - len(on_loan["items"]),
    }


def test_every_heldout10_answer_is_what_its_files_and_server_say():
    HELDOUT10.check_answers(computed_answers(server_module()))


def test_every_heldout10_task_loads_with_its_files():
    """Without the mcp extra too: the tasks file parses, each task's files resolve beside it, and the mix is
    4 file tasks, 4 tool tasks and 2 that need both."""
    lines, tasks = task_lines(), load_tasks(TASKS)
    assert len(tasks) == len(lines) == 10 and len({line["id"] for line in lines}) == 10
    kinds = [(bool(t.files), bool(t.needs_tools)) for t in tasks]
    assert (kinds.count((True, False)), kinds.count((False, True)), kinds.count((True, True))) == (4, 4, 2)
    assert all(set(t.needs_tools) <= TOOLS for t in tasks)
    assert sum(t.expected_text is not None for t in tasks) == 2  # two named answers, the rest numbers
    assert all(task.expected_answer is not None for task in tasks)
    HELDOUT10.check_files_and_servers(tasks)
    # Held out: nothing shared with tools15's files.
    assert not {p.name for p in FILES.iterdir()} & {p.name for p in (DATA / "tools15").iterdir()}


def test_the_heldout10_server_offers_its_three_tools():
    import asyncio

    server = server_module()
    listed = {t.name: t for t in asyncio.run(server.server.list_tools())}
    assert set(listed) == TOOLS
    assert set(listed["late_fee_rule"].inputSchema["required"]) == {"item_type", "tier"}
    assert all(t.description and "\n" not in t.description.strip() for t in listed.values())


def test_the_heldout10_tools_are_forgiving_of_spelling_and_refuse_what_they_do_not_know():
    server = server_module()
    assert server.member_lookup(" fennel moss ").startswith("Card FENNEL-MOSS: Odile Parrish, standard tier")
    assert server.late_fee_rule("DVDs", "Student card") == "Late fee, dvd on a student card: EUR 0.35 per day late"
    assert server.branch_contact("quillon  CROSS branch").startswith("Quillon Cross branch: head librarian ")
    with pytest.raises(ValueError, match="no library card 'BLUE-OWL'; cards: AMBER-WICK, FENNEL-MOSS"):
        server.member_lookup("BLUE-OWL")
    with pytest.raises(ValueError, match="unknown item type 'vinyl'; choose one of: book, dvd, audiobook, magazine"):
        server.late_fee_rule("vinyl", "standard")
    with pytest.raises(ValueError, match="unknown tier 'gold'; choose one of: standard, student, senior"):
        server.late_fee_rule("book", "gold")
    with pytest.raises(ValueError, match="unknown branch 'Dunmore'; choose one of: Millbrook, Harrowgate"):
        server.branch_contact("Dunmore")
