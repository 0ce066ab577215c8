"""The web page end to end in headless Chromium: start a run from the form, watch its steps turn done,
approve a waiting plan, see the final answer; text holding <script> runs no script."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("starlette", reason="the web page needs the server extra (starlette)")

from ui_browser import start_chromium, stop_chromium  # noqa: E402
from ui_support import WAIT_S, Gate, LiveServer, fake_models, status_of  # noqa: E402

pytestmark = pytest.mark.slow
# Set to a folder (docs/) to save the screenshots docs/ui.md shows.
SHOTS = os.environ.get("HIERPLAN_UI_SCREENSHOTS")


@pytest.fixture(scope="module")
def browser():
    driver, profile = start_chromium()
    yield driver
    stop_chromium(driver, profile)


def wait_for(browser, css: str, timeout: float = WAIT_S):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, timeout).until(ec.presence_of_element_located((By.CSS_SELECTOR, css)))


def text_of(browser, element_id: str, timeout: float = WAIT_S) -> str:
    """An element's text, read again if a live refresh replaced it meanwhile."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, timeout, ignored_exceptions=(StaleElementReferenceException,
                                                               NoSuchElementException)).until(
        lambda b: b.find_element(By.ID, element_id).text)


def click(browser, element_id: str, timeout: float = WAIT_S) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def press(b):
        b.find_element(By.ID, element_id).click()
        return True

    WebDriverWait(browser, timeout, ignored_exceptions=(StaleElementReferenceException,)).until(press)


def shot(browser, name: str) -> None:
    if SHOTS:
        browser.save_screenshot(os.path.join(SHOTS, name))


def test_start_watch_approve_and_read_the_answer(browser, tmp_path, monkeypatch):
    from selenium.webdriver.common.by import By

    held = Gate("Step one's answer: 6 * 7 = 42.")
    fakes = fake_models(monkeypatch, script={"llm_step": [held]},
                        default={"aggregator": "6 * 7 = 42. The answer is 42."})
    db = str(tmp_path / "ui.sqlite")
    with LiveServer(db) as server:
        browser.get(server.url + "/")
        browser.find_element(By.ID, "task").send_keys("What is 6 * 7? Explain it in steps.")
        browser.find_element(By.ID, "split_writing").click()  # parts ("steps"): the planner plans it
        browser.find_element(By.ID, "approve").click()
        browser.find_element(By.ID, "start").click()
        wait_for(browser, "#approve-plan")  # the page itself shows the waiting plan
        assert text_of(browser, "status") == "waiting"
        run_id = browser.find_element(By.ID, "run-body").get_attribute("data-run")  # never replaced
        shot(browser, "ui-approval.png")
        click(browser, "approve-plan")
        wait_for(browser, '#step-1[data-status="running"]')  # live: no reload, the step works
        assert status_of(db, run_id) == "running"
        held.opened.set()
        wait_for(browser, '.run[data-status="done"]')
        statuses = browser.execute_script(  # in one go: a live refresh may replace the cards between reads
            "return Array.from(document.querySelectorAll('#steps .card'), c => c.dataset.status)")
        assert statuses == ["done", "done", "done"]
        assert text_of(browser, "final") == "6 * 7 = 42. The answer is 42."
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(browser, WAIT_S).until(lambda b: b.execute_script(  # the run picture, drawn
            "const p = document.getElementById('picture'); return p && p.complete && p.naturalWidth > 0"))
        shot(browser, "ui-run.png")
        browser.get(server.url + "/")  # the runs list shows it done
        row = wait_for(browser, f'tr[data-run="{run_id}"]')
        assert row.get_attribute("data-status") == "done" and "3/3" in row.text
        assert len(fakes.loads) == 1


def test_text_holding_script_runs_no_script(browser, tmp_path, monkeypatch):
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By

    evil = '<script>window.__pwned = 1; alert(1)</script><img src=x onerror="window.__pwned = 2">'
    fake_models(monkeypatch, default={"llm_step": evil, "aggregator": "answer " + evil})
    db = str(tmp_path / "ui.sqlite")
    with LiveServer(db) as server:
        browser.get(server.url + "/")
        browser.find_element(By.ID, "task").send_keys("task " + evil)
        browser.find_element(By.ID, "start").click()
        wait_for(browser, '.run[data-status="done"]')
        browser.refresh()
        wait_for(browser, '.run[data-status="done"]')
        assert text_of(browser, "task-text") == "task " + evil  # shown literally
        assert text_of(browser, "final") == "answer " + evil
        assert browser.execute_script("return window.__pwned === undefined")
        with pytest.raises(NoAlertPresentException):
            browser.switch_to.alert.text
        browser.get(server.url + "/")
        wait_for(browser, "#runs tr[data-run]")
        assert browser.execute_script("return window.__pwned === undefined")


def test_a_steps_text_shows_in_its_box_as_the_model_writes_it(browser, tmp_path, monkeypatch):
    import threading

    from fakes import Streamed, by_part
    from selenium.webdriver.support.ui import WebDriverWait

    held = threading.Event()
    evil = "<script>window.__pwned = 3</script>"
    first = Streamed("Step one ", "writes ", evil, " and ", held, "then ends.")
    fake_models(monkeypatch, default={"llm_step": by_part({1: first, 2: "Step two's answer.",
                                                                     3: "Step three's answer."})})
    db = str(tmp_path / "ui.sqlite")
    try:
        with LiveServer(db) as server:
            browser.get(server.url + "/")
            browser.find_element("id", "task").send_keys("Write the plan in steps.")
            browser.find_element("id", "split_writing").click()  # parts ("steps"): the planner plans it
            browser.find_element("id", "start").click()
            wait_for(browser, '#step-1[data-status="running"]')
            WebDriverWait(browser, WAIT_S).until(lambda b: b.execute_script(  # live, before the step is done
                "const p = document.getElementById('live-step-1'); return p && p.textContent.includes(' and ')"))
            assert text_of(browser, "live-step-1") == f"Step one writes {evil} and "  # as text
            assert browser.find_element("id", "step-1").get_attribute("data-status") == "running"
            shot(browser, "ui-streaming.png")
            held.set()
            wait_for(browser, '.run[data-status="done"]')
            output = browser.execute_script("return document.querySelector('#step-1 .output').textContent")
            assert output.strip() == f"Step one writes {evil} and then ends."  # the result, drawn as Markdown
            assert browser.execute_script("return window.__pwned === undefined")
    finally:
        held.set()
