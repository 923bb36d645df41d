// The live view of `kubemu serve` (/ui): fed by server-sent events from /ui/events.
// Each "state" event carries the cluster's summary and one point of the live charts.
(function () {
  "use strict";
  const $ = function (id) { return document.getElementById(id); };
  const esc = function (v) {
    return String(v === null || v === undefined ? "" : v).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  };
  const MAX_POINTS = 600;
  window.kubemuUi = { updates: 0, last: null };

  function table(header, rows) {
    if (!rows.length) { return '<p class="note">none</p>'; }
    return "<table><thead><tr>" + header.map(function (h) { return "<th>" + esc(h) + "</th>"; }).join("") +
      "</tr></thead><tbody>" + rows.map(function (r) { return "<tr>" + r.map(function (c) { return "<td>" + c + "</td>"; }).join("") + "</tr>"; }).join("") +
      "</tbody></table>";
  }
  function podLink(p) {
    return '<a href="#pod/' + encodeURIComponent(p.namespace) + "/" + encodeURIComponent(p.name) + '">' + esc(p.namespace + "/" + p.name) + "</a>";
  }
  function card(k, v) { return '<div class="card"><div class="v">' + esc(v) + '</div><div class="k">' + esc(k) + "</div></div>"; }

  function render(s) {
    const phases = s.phases || {};
    const pods = Object.values(phases).reduce(function (a, b) { return a + b; }, 0);
    let ready = 0;
    Object.values(s.pools).forEach(function (c) { ready += c.Ready; });
    $("cards").innerHTML = card("nodes Ready / all", ready + " / " + s.nodes) + card("pods", pods) +
      card("Running", phases.Running || 0) + card("Pending", phases.Pending || 0) +
      card("pending: unschedulable", s.queues.unschedulable);
    $("pools").innerHTML = table(["pool", "Ready", "NotReady", "SchedulingDisabled"], Object.keys(s.pools).sort().map(function (p) {
      const c = s.pools[p]; return [esc(p), c.Ready, c.NotReady, c.SchedulingDisabled];
    }));
    $("phases").innerHTML = table(["phase", "pods"], Object.keys(phases).sort().map(function (k) { return [esc(k), phases[k]]; }));
    $("pending").innerHTML = table(["pod", "queue", "last FailedScheduling"], s.pending.map(function (p) {
      return [podLink(p), esc(p.queue), esc(p.failed)];
    })) + (s.pendingTotal > s.pending.length ? '<p class="note">and ' + (s.pendingTotal - s.pending.length) + " more</p>" : "");
    $("recent").innerHTML = table(["pod", "phase", "node"], s.recent.map(function (p) { return [podLink(p), esc(p.phase), esc(p.node)]; }));
    if (s.yunikorn) {
      $("yunikorn").hidden = false;
      $("queues").innerHTML = "<ul>" + queueTree(s.yunikorn) + "</ul>";
    }
  }
  function res(r) { return Object.keys(r || {}).sort().map(function (k) { return k + "=" + r[k]; }).join(", ") || "—"; }
  function queueTree(q) {
    return '<li><b>' + esc(q.queuename) + "</b> " + '<span class="pill">allocated ' + esc(res(q.allocatedResource)) + "</span>" +
      '<span class="pill">pending ' + esc(res(q.pendingResource)) + "</span>" +
      '<span class="pill">guaranteed ' + esc(res(q.guaranteedResource)) + "</span>" +
      '<span class="pill">max ' + esc(res(q.maxResource)) + "</span>" +
      (q.children && q.children.length ? "<ul>" + q.children.map(queueTree).join("") + "</ul>" : "") + "</li>";
  }
  function plot(s) {
    const p = s.point;
    const t = [p.t];
    Plotly.extendTraces("live-throughput", { x: [t, t], y: [[p.bindsPerSecond], [p.startsPerSecond]] }, [0, 1], MAX_POINTS);
    if (p.p50 !== null) {
      Plotly.extendTraces("live-latency", { x: [t, t, t], y: [[p.p50], [p.p90], [p.p99]] }, [0, 1, 2], MAX_POINTS);
    }
    Plotly.extendTraces("live-queue", { x: [t, t, t], y: [[s.queues.waiting], [s.queues.unschedulable], [s.queues.nominated]] }, [0, 1, 2], MAX_POINTS);
  }

  function connect() {
    const source = new EventSource("/ui/events");
    source.addEventListener("state", function (e) {
      const s = JSON.parse(e.data);
      window.kubemuUi.updates += 1;
      window.kubemuUi.last = s;
      $("live-dot").className = "live on";
      $("live-text").textContent = "live · " + s.point.t.replace("T", " ").slice(0, 19);
      render(s);
      plot(s);
    });
    source.onerror = function () { $("live-dot").className = "live"; $("live-text").textContent = "reconnecting…"; };
  }

  function showPod(ns, name) {
    $("view-cluster").hidden = true; $("view-pod").hidden = false;
    $("pod-title").textContent = "Pod " + ns + "/" + name;
    fetch("/ui/api/pod/" + encodeURIComponent(ns) + "/" + encodeURIComponent(name)).then(function (r) { return r.json(); }).then(function (p) {
      if (p.kind === "Status") { $("pod-summary").innerHTML = '<p class="note">' + esc(p.message) + "</p>"; return; }
      $("pod-summary").innerHTML = table(["phase", "node", "nominated node"], [[esc(p.phase), esc(p.node), esc(p.nominatedNodeName)]]) +
        table(["condition", "status", "reason", "message"], p.conditions.map(function (c) { return [esc(c.type), esc(c.status), esc(c.reason), esc(c.message)]; }));
      $("pod-events").innerHTML = table(["time", "type", "reason", "message", "count"], p.events.map(function (e) {
        return [esc(e.time), esc(e.type), esc(e.reason), esc(e.message), esc(e.count)];
      }));
      $("pod-explanation").innerHTML = p.explanation ? "<pre>" + esc(JSON.stringify(p.explanation.status || p.explanation, null, 1)) + "</pre>" :
        '<p class="note">no explanation recorded for this pod</p>';
    });
  }
  function route() {
    const m = /^#pod\/([^/]+)\/([^/]+)$/.exec(location.hash);
    if (m) { showPod(decodeURIComponent(m[1]), decodeURIComponent(m[2])); return; }
    $("view-cluster").hidden = false; $("view-pod").hidden = true;
  }
  window.addEventListener("hashchange", route);
  route();
  connect();
})();
