"""Draws docs/ui-approval.png and docs/ui-run.png: a scripted run on the page in headless Chromium.

    .venv/bin/python tests/ui_screenshots.py docs
"""

import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from selenium.webdriver.common.by import By
import hierplan.models
from fakes import ScriptedChatModel
from ui_support import LiveServer
from ui_browser import start_chromium, stop_chromium

plan = {"goal": "Find the total cost of 3 notebooks at $4.25 and 2 pens at $1.10, with 8% sales tax",
        "assumptions": ["prices are before tax", "tax applies to the whole order"],
        "steps": [
  {"id": 1, "title": "Subtotal of the order", "instruction": "Compute 3 * 4.25 + 2 * 1.10 and print it", "tool": "python", "expected_output": "the subtotal in dollars"},
  {"id": 2, "title": "Add the sales tax", "instruction": "Multiply the subtotal by 1.08, rounded to cents, and print it", "tool": "python", "expected_output": "the total with tax", "depends_on": [1]},
  {"id": 3, "title": "Explain the result", "instruction": "Explain in two sentences how the total was found", "tool": "llm", "expected_output": "a short explanation", "depends_on": [2]}]}
codes = ["```python\nsubtotal = 3 * 4.25 + 2 * 1.10\nprint(round(subtotal, 2))\n```",
         "```python\nsubtotal = 3 * 4.25 + 2 * 1.10\ntotal = round(subtotal * 1.08, 2)\nprint(total)\n```"]
m = ScriptedChatModel(script={"planner": [json.dumps(plan)], "python_step": list(codes)},
    default={"llm_step": "The notebooks and pens come to $14.95 before tax; adding 8% sales tax gives $16.15.",
             "aggregator": "3 notebooks at $4.25 and 2 pens at $1.10 come to $14.95; with 8% sales tax the total cost is $16.15."})
hierplan.models.load_chat_model = lambda *a, **k: m
out = sys.argv[1] if len(sys.argv) > 1 else "docs"
db = os.path.join(tempfile.mkdtemp(prefix="hierplan-shots-"), "runs.sqlite")
driver, profile = start_chromium()
driver.set_window_size(1200, 1500)
from selenium.webdriver.support.ui import WebDriverWait
from selenium.webdriver.support import expected_conditions as ec
def wait(css): return WebDriverWait(driver, 30).until(ec.presence_of_element_located((By.CSS_SELECTOR, css)))
with LiveServer(db) as server:
    driver.get(server.url + "/")
    driver.find_element(By.ID, "task").send_keys(plan["goal"].replace("Find", "What is") + "?")
    driver.find_element(By.ID, "approve").click()
    driver.find_element(By.ID, "start").click()
    wait("#approve-plan"); time.sleep(0.5)
    driver.find_element(By.CSS_SELECTOR, "#approval summary").click()
    time.sleep(0.3)
    driver.save_screenshot(os.path.join(out, "ui-approval.png"))
    driver.find_element(By.ID, "approve-plan").click()
    wait('.run[data-status="done"]'); time.sleep(0.8)
    driver.find_element(By.CSS_SELECTOR, ".calls summary").click()
    driver.set_window_size(1200, driver.execute_script("return document.documentElement.scrollHeight") + 140)
    time.sleep(0.5)
    driver.save_screenshot(os.path.join(out, "ui-run.png"))
stop_chromium(driver, profile)
