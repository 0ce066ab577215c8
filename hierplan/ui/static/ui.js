// hierplan ui: live updates of a run page (server-sent events) and of the runs list. No inline script
// anywhere (the CSP forbids it); model text only ever enters the page as textContent or server-escaped HTML.
"use strict";

(function () {
  const REFRESH = new Set(["kind", "plan", "step_finished", "replan", "final", "approval_needed", "steps_started",
                           "run_started", "run_finished"]);
  const POLL_MS = 2000;

  function runPage(body) {
    const runId = body.dataset.run;
    const base = "/runs/" + encodeURIComponent(runId);
    let busy = false, again = false, timer = null, polling = null, heard = false, last = null;

    function status() {
      const run = body.querySelector(".run");
      return run ? run.dataset.status : body.dataset.status;
    }

    async function refresh() {
      if (busy) { again = true; return; }
      busy = true;
      try {
        const editing = document.activeElement && document.activeElement.id === "plan-json";
        const response = await fetch(base + "/body", { credentials: "same-origin", cache: "no-store" });
        if (response.ok && !editing) {  // never replace a plan someone is typing
          const html = await response.text();
          if (html !== last) {
            const open = Array.from(body.querySelectorAll("details[id][open]"), (d) => d.id);
            body.innerHTML = html;
            last = html;
            body.dataset.status = status();
            for (const id of open) { const d = document.getElementById(id); if (d) d.open = true; }
          }
        }
      } catch (e) { /* the server may be restarting: the next event or poll tries again */ }
      finally {
        busy = false;
        if (again) { again = false; refresh(); }
      }
    }

    function soon() {
      if (timer) return;
      timer = setTimeout(() => { timer = null; refresh(); }, 120);
    }

    // A token event: a piece of the text a model call streams, at its offset (in characters) in that call's
    // text. It goes into its box: a working step's (live-step-ID), the answer's (live-final), the rewrite's
    // (live-revision). The server draws each box with the text so far, so a box not drawn yet, or one that
    // missed pieces, is drawn again from the server instead.
    function placeToken(event) {
      const id = event.node === "aggregator" ? "live-final" : event.node === "reviser" ? "live-revision"
        : event.step_id !== null && event.step_id !== undefined ? "live-step-" + event.step_id : null;
      if (!id) return;
      const pre = document.getElementById(id);
      if (!pre) { soon(); return; }
      const attempt = event.attempt === null || event.attempt === undefined ? "" : String(event.attempt);
      if (pre.dataset.attempt !== attempt) {  // a repaired program or another rewrite: its text starts again
        pre.dataset.attempt = attempt;
        pre.textContent = "";
      }
      const have = Array.from(pre.textContent);  // code points, as the server counts them
      const piece = Array.from(event.text);
      if (event.offset > have.length) { soon(); return; }
      if (event.offset + piece.length > have.length) pre.textContent += piece.slice(have.length - event.offset).join("");
      if (id === "live-final") {
        const none = document.getElementById("no-final");
        if (none) none.remove();
      }
    }

    function setLiveStatus(text) {
      const el = document.getElementById("live-status");
      if (el) el.textContent = text;
    }

    function pollWhileRunning() {
      // a run worked on by another process (the CLI) sends no events here: re-read it while it runs
      if (polling) return;
      polling = setInterval(async () => {
        await refresh();
        if (status() !== "running") { clearInterval(polling); polling = null; }
      }, POLL_MS);
    }

    function listen() {
      const source = new EventSource(base + "/events");
      // what happened between drawing the page and this subscription (a step started, its first tokens) sent
      // no event here: read the run once more now that nothing more can be missed
      source.onopen = () => soon();
      source.onmessage = (message) => {
        const event = JSON.parse(message.data);
        heard = true;
        if (event.event === "token") placeToken(event);
        else if (event.event === "status") setLiveStatus(event.text);
        else if (event.event === "node_started" && event.node === "aggregator") setLiveStatus("writing the final answer");
        if (REFRESH.has(event.event)) soon();
      };
      source.addEventListener("idle", async () => {
        source.close();
        // nothing works on this run here: re-read it only if it changed since the page was drawn
        if (heard || status() === "running") await refresh();
        if (status() === "running") pollWhileRunning();
      });
    }

    listen();
    document.addEventListener("submit", () => { if (polling) clearInterval(polling); });
  }

  function runsPage(list) {
    // while a run works, keep its row (status, steps, tokens) current without touching the form
    setInterval(async () => {
      if (!list.querySelector('tr[data-status="running"]')) return;
      try {
        const response = await fetch("/", { credentials: "same-origin", cache: "no-store" });
        if (!response.ok) return;
        const doc = new DOMParser().parseFromString(await response.text(), "text/html");
        const fresh = doc.getElementById("runs");
        if (fresh) list.replaceChildren(...fresh.childNodes);
      } catch (e) { /* try again at the next tick */ }
    }, POLL_MS);
  }

  document.addEventListener("DOMContentLoaded", () => {
    const body = document.getElementById("run-body");
    if (body) runPage(body);
    const list = document.getElementById("runs");
    if (list) runsPage(list);
  });
})();
