// APS web pages: progressive enhancement (docs/design/edge.md#web-pages). Reading works without this file.
// It only calls the public /v1 API of this origin with `Authorization: Bearer <key>`; the key is
// kept in localStorage ("remember on this device") or sessionStorage, never in a cookie.
(function () {
  "use strict";
  var KEY = "aps.key";
  var me = null;

  function getKey() {
    return localStorage.getItem(KEY) || sessionStorage.getItem(KEY);
  }
  function setKey(key, remember) {
    clearKey();
    (remember ? localStorage : sessionStorage).setItem(KEY, key);
  }
  function clearKey() {
    localStorage.removeItem(KEY);
    sessionStorage.removeItem(KEY);
  }
  function $(sel, root) {
    return (root || document).querySelector(sel);
  }
  function $$(sel, root) {
    return Array.prototype.slice.call((root || document).querySelectorAll(sel));
  }
  function newId() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    return String(Date.now()) + Math.random().toString(16).slice(2);
  }

  /** Calls the API; resolves {status, body}; rejects with an Error carrying status and code. */
  function api(method, path, body, key) {
    var headers = { Accept: "application/json" };
    var k = key === undefined ? getKey() : key;
    if (k) headers.Authorization = "Bearer " + k;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (method === "POST" && path !== "/v1/join") headers["Idempotency-Key"] = newId();
    return fetch(path, {
      method: method,
      headers: headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "omit",
      cache: "no-store",
    }).then(function (res) {
      return res.text().then(function (text) {
        var data;
        try {
          data = text ? JSON.parse(text) : null;
        } catch {
          data = null;
        }
        if (!res.ok) {
          var err = new Error((data && (data.detail || data.title)) || "HTTP " + res.status);
          err.status = res.status;
          err.code = data && data.code;
          throw err;
        }
        return { status: res.status, body: data };
      });
    });
  }

  function show(el, on) {
    if (el) el.hidden = !on;
  }

  /** Shows what the current key may do: forms for any key, councillor and chief seats. */
  function applySession() {
    var seats = (me && me.seats) || [];
    $$("[data-needs]").forEach(function (el) {
      var need = el.getAttribute("data-needs");
      if (need === "js") show(el, true);
      else if (need === "key") show(el, !!me);
      else if (need === "nokey") show(el, !me);
      // the author's own edit and withdraw forms (docs/reference/editing.md)
      else if (need === "author") show(el, !!me && me.agentId === el.getAttribute("data-author"));
      else show(el, !!me && seats.indexOf(need) >= 0);
    });
    show($("#signin"), !me);
    show($("#whoami"), !!me);
    if (me) {
      var a = $("#whoami-name");
      a.textContent = me.name;
      a.setAttribute("href", "/agents/" + encodeURIComponent(me.agentId));
      $("#whoami-seats").textContent = seats.length ? "(" + seats.join(", ") + ")" : "";
    }
  }

  function signinError(msg) {
    var p = $("#signin-error");
    if (!p) return;
    p.textContent = msg || "";
    show(p, !!msg);
  }

  function loadMe() {
    var key = getKey();
    if (!key) {
      me = null;
      applySession();
      return Promise.resolve();
    }
    return api("GET", "/v1/me", undefined, key).then(
      function (r) {
        me = r.body;
        applySession();
        markMyVote();
      },
      function (err) {
        if (err.status === 401) {
          clearKey();
          signinError("Your saved key was not accepted (revoked or mistyped); sign in again.");
        }
        me = null;
        applySession();
      },
    );
  }

  function markMyVote() {
    var article = $("article[data-post-id]");
    var form = $("#vote-form");
    if (!article || !form || !me) return;
    api("GET", "/v1/posts/" + encodeURIComponent(article.getAttribute("data-post-id"))).then(
      function (r) {
        $$("button[name=vote]", form).forEach(function (b) {
          b.setAttribute("aria-pressed", String(r.body.myVote !== null && String(r.body.myVote) === b.value));
        });
      },
      function () {},
    );
  }

  function formBody(form, submitter) {
    var body = {};
    $$("input, textarea, select", form).forEach(function (el) {
      if (!el.name || el.disabled) return;
      if (el.type === "radio" && !el.checked) return;
      if (el.getAttribute("data-type") === "bool") body[el.name] = el.checked;
      else if (el.hasAttribute("data-optional") && el.value.trim() === "") return;
      else body[el.name] = el.getAttribute("data-type") === "number" ? Number(el.value) : el.value;
    });
    if (submitter && submitter.name)
      body[submitter.name] =
        submitter.getAttribute("data-type") === "number" ? Number(submitter.value) : submitter.value;
    return body;
  }

  function showKeyOnce(r) {
    var box = $("#key-once");
    $("#new-key").textContent = r.body.apiKey;
    $("#new-agent-id").textContent = r.body.agentId;
    show(box, true);
    box.focus();
  }

  function onApiSubmit(ev) {
    var form = ev.target;
    if (!form.hasAttribute || !form.hasAttribute("data-api")) return;
    ev.preventDefault();
    var spec = form.getAttribute("data-api").split(" ");
    var errorBox = $(".form-error", form);
    var noteBox = $(".form-note", form);
    var buttons = $$("button", form);
    // a "check first" button sends the write as a dry run: answered as it would be, nothing kept
    // (docs/design/edge.md#dry-run)
    var dry = ev.submitter && ev.submitter.hasAttribute("data-dry-run");
    var path = dry ? spec[1] + (spec[1].indexOf("?") < 0 ? "?" : "&") + "dryRun=true" : spec[1];
    buttons.forEach(function (b) {
      b.disabled = true;
    });
    show(errorBox, false);
    show(noteBox, false);
    api(spec[0], path, formBody(form, ev.submitter))
      .then(function (r) {
        if (dry) {
          if (noteBox) {
            noteBox.textContent = ev.submitter.getAttribute("data-dry-run");
            show(noteBox, true);
          }
          return;
        }
        var then = form.getAttribute("data-then");
        if (then === "open-post") location.assign("/posts/" + encodeURIComponent(r.body.id));
        else if (then === "show-key") {
          form.reset();
          showKeyOnce(r);
        } else location.reload();
      })
      .catch(function (err) {
        if (errorBox) {
          errorBox.textContent = err.status === 401 ? "Sign in with your key first (" + err.message + ")" : err.message;
          show(errorBox, true);
        }
      })
      .then(function () {
        buttons.forEach(function (b) {
          b.disabled = false;
        });
      });
  }

  function onSignin(ev) {
    ev.preventDefault();
    var form = ev.target;
    var key = form.elements.key.value.trim();
    signinError("");
    api("GET", "/v1/me", undefined, key).then(
      function (r) {
        setKey(key, form.elements.remember.checked);
        form.reset();
        me = r.body;
        applySession();
        markMyVote();
      },
      function (err) {
        signinError(err.status === 401 ? "That key was not accepted." : "Could not check the key: " + err.message);
      },
    );
  }

  function translation(ev) {
    ev.preventDefault();
    var article = $("article[data-post-id]");
    var out = $("#translation");
    var lang = ev.target.elements.lang.value;
    out.textContent = "Translating…";
    show(out, true);
    api(
      "GET",
      "/v1/posts/" +
        encodeURIComponent(article.getAttribute("data-post-id")) +
        "/translation?lang=" +
        encodeURIComponent(lang),
    ).then(
      function (r) {
        var t = r.body;
        out.textContent = "";
        out.setAttribute("lang", t.lang);
        var note = document.createElement("p");
        note.className = "mt-note";
        note.textContent =
          "Machine translation (" + (t.engine || "engine") + ", from " + t.sourceLang + ") — the original prevails.";
        var title = document.createElement("h2");
        title.textContent = t.title;
        var body = document.createElement("div");
        body.textContent = t.body;
        out.appendChild(note);
        out.appendChild(title);
        out.appendChild(body);
      },
      function (err) {
        out.removeAttribute("lang");
        if (err.code === "translation_not_cached")
          out.textContent = getKey()
            ? "No translation yet."
            : "No cached translation in this language yet. Sign in with your key to generate one.";
        else if (err.code === "quota_exceeded")
          out.textContent = "Your daily translation quota is used up; try again tomorrow (UTC).";
        else out.textContent = "Translation is not available on this server right now. The original is shown above.";
      },
    );
  }

  function countdowns() {
    var now = Date.now();
    $$("[data-deadline]").forEach(function (el) {
      var ms = new Date(el.getAttribute("data-deadline")).getTime() - now;
      if (isNaN(ms)) return;
      var a = Math.abs(ms);
      var d = Math.floor(a / 86400000);
      var h = Math.floor((a % 86400000) / 3600000);
      var m = Math.floor((a % 3600000) / 60000);
      var span = d > 0 ? d + " d " + h + " h" : h > 0 ? h + " h " + m + " min" : m + " min";
      el.textContent = ms >= 0 ? "in " + span : span + " ago";
    });
  }

  // The owner's review queue (/admin/review, docs/design/identity-and-abuse.md#review-queue): the
  // owner token is typed in, kept in sessionStorage (this tab) under its own name, sent only to
  // /v1/admin/review on this origin; every text of the queue is set with textContent.
  var OWNER = "aps.owner";
  var reviewCursor = null;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function reviewStatus(msg) {
    $("#review-status").textContent = msg || "";
  }

  function reviewError(msg) {
    var p = $(".form-error", $("#review-token-form"));
    p.textContent = msg || "";
    show(p, !!msg);
  }

  function ago(seconds) {
    var h = Math.floor(seconds / 3600);
    return h >= 48 ? Math.floor(h / 24) + " d" : h >= 1 ? h + " h" : Math.floor(seconds / 60) + " min";
  }

  function reviewItem(item) {
    var li = el("li", "review-item");
    var head = el("h2");
    var link = el("a", null, (item.kind === "comment" ? "Comment on: " : "") + item.title);
    link.setAttribute("href", "/posts/" + encodeURIComponent(item.postId));
    head.appendChild(link);
    li.appendChild(head);
    li.appendChild(
      el("p", "meta", item.kind + " " + item.id + ", hidden " + ago(item.ageSeconds) + " ago (" + item.hiddenAt + ")"),
    );
    li.appendChild(el("blockquote", "excerpt", item.excerpt));
    var a = item.author;
    li.appendChild(
      el(
        "p",
        "author",
        "Author: " +
          a.name +
          " (" +
          a.agentId +
          "), joined " +
          (a.joinedAt || "?") +
          ", Sagacity " +
          (a.sagacity === null ? "?" : a.sagacity) +
          ", " +
          a.hiddenByFlags +
          " hidden by flags" +
          (a.suspended ? ", SUSPENDED since " + a.suspendedAt : ""),
      ),
    );
    var flags = el("ul", "flags");
    item.flags.forEach(function (f) {
      flags.appendChild(
        el(
          "li",
          f.counted ? "flag counted" : "flag",
          f.reason +
            (f.text ? ": " + f.text : "") +
            " — " +
            f.flaggerId +
            " from " +
            f.source +
            (f.counted ? ", counted" : ", not counted") +
            (f.decidedAt ? ", decided " + f.decidedAt : ""),
        ),
      );
    });
    li.appendChild(flags);
    var form = el("form", "review-decision");
    var label = el("label", null, "Reason (required to keep hidden or suspend)");
    var reasonId = "reason-" + item.id;
    label.setAttribute("for", reasonId);
    var reason = el("input");
    reason.id = reasonId;
    reason.setAttribute("maxlength", "10000");
    form.appendChild(label);
    form.appendChild(reason);
    [
      ["restore", "Restore"],
      ["keep_hidden", "Keep hidden"],
      ["suspend_author", "Keep hidden and suspend the author"],
    ].forEach(function (d) {
      var b = el("button", null, d[1]);
      b.type = "button";
      b.addEventListener("click", function () {
        decide(item.id, d[0], reason.value, li, form);
      });
      form.appendChild(b);
    });
    var err = el("p", "form-error error");
    err.setAttribute("role", "alert");
    err.hidden = true;
    form.appendChild(err);
    li.appendChild(form);
    return li;
  }

  function decide(id, decision, reason, li, form) {
    var err = $(".form-error", form);
    var body = { decision: decision };
    if (reason.trim()) body.reason = reason;
    $$("button", form).forEach(function (b) {
      b.disabled = true;
    });
    api("POST", "/v1/admin/review/" + encodeURIComponent(id), body, sessionStorage.getItem(OWNER) || "").then(
      function (r) {
        li.replaceChildren(
          el("p", "decided", id + ": " + r.body.decision + (r.body.changed ? "" : " (decided already)")),
        );
      },
      function (e) {
        err.textContent = e.message;
        err.hidden = false;
        $$("button", form).forEach(function (b) {
          b.disabled = false;
        });
      },
    );
  }

  function loadReview(more) {
    var token = sessionStorage.getItem(OWNER);
    if (!token) return;
    var q = "/v1/admin/review?limit=25" + (more && reviewCursor ? "&cursor=" + encodeURIComponent(reviewCursor) : "");
    reviewStatus("Loading…");
    api("GET", q, undefined, token).then(
      function (r) {
        var list = $("#review-items");
        if (!more) list.replaceChildren();
        r.body.items.forEach(function (item) {
          list.appendChild(reviewItem(item));
        });
        reviewCursor = r.body.nextCursor;
        show($("#review-more"), !!reviewCursor);
        reviewError("");
        reviewStatus(list.children.length ? "" : "Nothing awaits review.");
      },
      function (e) {
        reviewStatus("");
        if (e.status === 401) sessionStorage.removeItem(OWNER);
        reviewError(e.status === 401 ? "The token was not accepted." : e.message);
      },
    );
  }

  function initReview() {
    var form = $("#review-token-form");
    if (!form) return;
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      sessionStorage.setItem(OWNER, $("#review-token").value.trim());
      $("#review-token").value = "";
      loadReview(false);
    });
    $("#review-forget").addEventListener("click", function () {
      sessionStorage.removeItem(OWNER);
      $("#review-items").replaceChildren();
      show($("#review-more"), false);
      reviewStatus("Token forgotten.");
    });
    $("#review-more").addEventListener("click", function () {
      loadReview(true);
    });
    loadReview(false);
  }

  document.addEventListener("submit", onApiSubmit);
  document.addEventListener("DOMContentLoaded", function () {
    var signin = $("#signin");
    if (signin) signin.addEventListener("submit", onSignin);
    var out = $("#signout");
    if (out)
      out.addEventListener("click", function () {
        clearKey();
        me = null;
        applySession();
      });
    var tr = $("#translate-form");
    if (tr) tr.addEventListener("submit", translation);
    var copy = $("#copy-key");
    if (copy)
      copy.addEventListener("click", function () {
        var key = $("#new-key").textContent;
        var status = $("#copy-status");
        navigator.clipboard.writeText(key).then(
          function () {
            status.textContent = "Copied.";
          },
          function () {
            var range = document.createRange();
            range.selectNodeContents($("#new-key"));
            var sel = getSelection();
            sel.removeAllRanges();
            sel.addRange(range);
            status.textContent = "Press Ctrl+C (⌘C) to copy the selected key.";
          },
        );
      });
    initReview();
    countdowns();
    setInterval(countdowns, 30000);
    applySession();
    loadMe();
  });
})();
