// The inbox's live list: when /inbox/events says the approvals waiting for you changed, fetch the
// inbox again and put its list in place of this one. Without this script the page works the same,
// a reload away. No build, no framework; served from /inbox/static as the pages' CSP asks.
"use strict";
(function () {
  const live = document.getElementById("live");
  if (!live || !window.EventSource || !window.fetch) return;
  let shown = live.dataset.approvals || "";
  const source = new EventSource(live.dataset.events);
  source.addEventListener("pending", async function (event) {
    const approvals = JSON.parse(event.data).approvals.join(" ");
    if (approvals === shown) return;
    const answer = await fetch(window.location.href, { credentials: "same-origin" });
    if (!answer.ok) return;
    const page = new DOMParser().parseFromString(await answer.text(), "text/html");
    const fresh = page.getElementById("live");
    if (!fresh) return;
    shown = fresh.dataset.approvals || "";
    live.replaceChildren(...Array.from(fresh.childNodes, function (node) { return document.importNode(node, true); }));
    live.dataset.approvals = shown;
  });
})();
