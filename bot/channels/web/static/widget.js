// Arca support widget: talks to /api/chat (seed 000's SSE events) and draws the conversation.
// Every text from the model, the tools or the server is set with textContent: never parsed as HTML.
"use strict";

(function () {
  const TEXT = {
    ko: {
      title: "아르카 온라인 고객지원",
      subtitle: "무엇이든 물어보세요",
      subtitle_player: (id) => `플레이어 ${id} 님으로 접속됨`,
      subtitle_anon: "비회원 상담 (주문·쿠폰은 게임에서 로그인 후 이용)",
      input_label: "메시지",
      placeholder: "메시지를 입력하세요 (Enter 전송, Shift+Enter 줄바꿈)",
      send: "보내기",
      log: "대화",
      lang_button: "EN",
      lang_label: "Switch to English",
      thinking: "생각 중…",
      selecting: "필요한 도구를 고르는 중…",
      writing: "답변 작성 중…",
      running: "실행 중…",
      done: "완료",
      failed: "오류",
      args: "인자",
      observation: "결과",
      reasoning: "판단 근거",
      joined: "진행 중인 답변에 전달했습니다",
      injected: (t) => `추가 메시지 반영: ${t}`,
      compact: (a, b) => `이전 대화를 요약했습니다 (${a} → ${b})`,
      footer: (i, t, s) => `반복 ${i}회 · 토큰 ${t.toLocaleString("ko-KR")} · ${s}초`,
      helpful: "도움이 되었나요?",
      rated: "평가 감사합니다!",
      comment_prompt: "무엇이 부족했나요? (선택)",
      no_llm: "지금은 답변할 수 없습니다: 서버에 LLM이 설정되지 않았습니다.",
      operator: "운영자 안내: ",
      rate: (s) => `메시지가 너무 많습니다. ${s}초 후에 다시 보내 주세요.`,
      token: "로그인 정보가 만료되었습니다. 페이지를 새로 고쳐 주세요.",
      network: "연결이 끊겼습니다. 다시 연결하는 중…",
      lost: "연결이 끊겼습니다. 답변은 저장되어 있으니 잠시 후 새로 고쳐 주세요.",
    },
    en: {
      title: "Arca Online Support",
      subtitle: "Ask us anything",
      subtitle_player: (id) => `Signed in as player ${id}`,
      subtitle_anon: "Guest chat (sign in through the game for orders and coupons)",
      input_label: "Message",
      placeholder: "Type a message (Enter sends, Shift+Enter for a new line)",
      send: "Send",
      log: "Conversation",
      lang_button: "한국어",
      lang_label: "한국어로 보기",
      thinking: "Thinking…",
      selecting: "Choosing the tools it needs…",
      writing: "Writing the answer…",
      running: "running…",
      done: "done",
      failed: "error",
      args: "Arguments",
      observation: "Result",
      reasoning: "Reasoning",
      joined: "Added to the answer in progress",
      injected: (t) => `Follow-up taken into account: ${t}`,
      compact: (a, b) => `Earlier conversation summarised (${a} → ${b})`,
      footer: (i, t, s) => `${i} iteration${i === 1 ? "" : "s"} · ${t.toLocaleString("en-US")} tokens · ${s} s`,
      helpful: "Was this helpful?",
      rated: "Thanks for the rating!",
      comment_prompt: "What was missing? (optional)",
      no_llm: "The bot cannot answer right now: no LLM is configured on the server.",
      operator: "For the operator: ",
      rate: (s) => `Too many messages. Please try again in ${s} s.`,
      token: "Your sign-in has expired. Please reload the page.",
      network: "Connection lost. Reconnecting…",
      lost: "Connection lost. Your answer is saved; reload in a moment.",
    },
  };

  const INTERRUPT_PREFIX = "[USER INTERRUPT]";
  const $ = (id) => document.getElementById(id);
  const log = $("log");
  const input = $("input");
  const form = $("composer");
  const notice = $("notice");

  const params = new URLSearchParams(location.hash.slice(1));
  const TOKEN_KEY = "arca-support-token";
  function storedToken() {
    try {
      return sessionStorage.getItem(TOKEN_KEY);
    } catch (e) {
      return null; // storage blocked (e.g. a sandboxed frame): the token lives in memory only
    }
  }
  function storeToken(token) {
    try {
      sessionStorage.setItem(TOKEN_KEY, token);
    } catch (e) {
      /* in memory only */
    }
  }
  const state = {
    token: params.get("token") || storedToken(),
    thread: /^[A-Za-z0-9_-]{1,64}$/.test(params.get("thread") || "") ? params.get("thread") : "main",
    lang: params.get("lang") || ((navigator.language || "ko").toLowerCase().startsWith("ko") ? "ko" : "en"),
    identity: null,
    reading: false,
    lastEventId: null,
    turn: null,
  };
  if (!TEXT[state.lang]) state.lang = "ko";
  if (params.has("token")) {
    // Keep the token out of the address bar, history and any shared link; this tab keeps it for reloads.
    storeToken(params.get("token"));
    params.delete("token");
    history.replaceState(null, "", location.pathname + location.search + (params.toString() ? "#" + params : ""));
  }
  const t = (key, ...args) => {
    const v = TEXT[state.lang][key];
    return typeof v === "function" ? v(...args) : v;
  };

  // ---- page text ----------------------------------------------------------------------------------

  function applyLanguage() {
    document.documentElement.lang = state.lang;
    for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
    for (const el of document.querySelectorAll("[data-i18n-placeholder]")) el.placeholder = t(el.dataset.i18nPlaceholder);
    for (const el of document.querySelectorAll("[data-i18n-label]")) el.setAttribute("aria-label", t(el.dataset.i18nLabel));
    const lang = $("lang");
    lang.textContent = t("lang_button");
    lang.setAttribute("aria-label", t("lang_label"));
    if (state.identity) {
      $("who").textContent = state.identity.kind === "player" ? t("subtitle_player", state.identity.player_id) : t("subtitle_anon");
    }
    document.title = t("title");
  }

  function showNotice(text) {
    notice.textContent = text;
    notice.hidden = !text;
  }

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  // The answers use a little Markdown (bold, code, bullets, headings): drawn as DOM nodes, never as HTML.
  function inline(node, text) {
    const re = /(\*\*[^*\n]+\*\*|`[^`\n]+`)/g;
    let last = 0;
    let m;
    while ((m = re.exec(text))) {
      if (m.index > last) node.appendChild(document.createTextNode(text.slice(last, m.index)));
      const tok = m[0];
      node.appendChild(tok.startsWith("**") ? el("strong", null, tok.slice(2, -2)) : el("code", null, tok.slice(1, -1)));
      last = m.index + tok.length;
    }
    if (last < text.length) node.appendChild(document.createTextNode(text.slice(last)));
  }

  function renderRich(node, text) {
    node.replaceChildren();
    text.split("\n").forEach((line, i) => {
      if (i) node.appendChild(document.createTextNode("\n"));
      let m;
      if ((m = /^\s{0,3}#{1,6}\s+(.*)$/.exec(line))) {
        const strong = el("strong");
        inline(strong, m[1]);
        node.appendChild(strong);
      } else if ((m = /^(\s*)[-*]\s+(.*)$/.exec(line))) {
        node.appendChild(document.createTextNode(m[1] + "• "));
        inline(node, m[2]);
      } else inline(node, line);
    });
  }

  function scrollDown() {
    log.scrollTop = log.scrollHeight;
  }

  // ---- conversation ---------------------------------------------------------------------------------

  function addUser(text, note) {
    const li = el("li", "msg user");
    li.appendChild(el("div", "bubble", text));
    if (note) li.appendChild(el("div", "note", note));
    log.appendChild(li);
    scrollDown();
    return li;
  }

  function addBotText(text) {
    const li = el("li", "msg bot");
    const bubble = el("div", "bubble");
    renderRich(bubble, text);
    li.appendChild(bubble);
    log.appendChild(li);
    return li;
  }

  function newTurn() {
    const li = el("li", "msg bot");
    const turn = {
      li,
      status: el("div", "status"),
      tools: el("div", "tools"),
      bubble: el("div", "bubble"),
      footer: el("div", "footer"),
      cards: [],
      reasoning: {},
      text: "",
      finished: false,
    };
    li.append(turn.status, turn.tools, turn.bubble, turn.footer);
    turn.bubble.setAttribute("aria-busy", "true");
    log.appendChild(li);
    state.turn = turn;
    return turn;
  }

  function currentTurn() {
    return state.turn && !state.turn.finished ? state.turn : newTurn();
  }

  function pretty(value) {
    if (value === null || value === undefined) return "";
    if (typeof value === "string") return value;
    return JSON.stringify(value, null, 2);
  }

  function toolCard(turn, data) {
    const card = el("details", "tool running");
    const summary = el("summary");
    summary.append(el("span", "name", data.tool_name), el("span", "state", t("running")));
    const body = el("div", "body");
    body.append(el("h3", null, t("args")), el("pre", "args", pretty(data.tool_args)));
    const why = turn.reasoning[data.iteration];
    if (why) body.append(el("h3", null, t("reasoning")), el("pre", "reasoning", why));
    card.append(summary, body);
    card.dataset.tool = data.tool_name;
    card.dataset.iteration = String(data.iteration);
    turn.tools.appendChild(card);
    turn.cards.push(card);
    return card;
  }

  function finishCard(turn, data) {
    const card =
      turn.cards.find((c) => c.classList.contains("running") && c.dataset.tool === data.tool_name && c.dataset.iteration === String(data.iteration)) ||
      toolCard(turn, data);
    card.classList.remove("running");
    card.classList.add(data.error ? "error" : "ok");
    const secs = typeof data.iter_elapsed === "number" ? ` · ${data.iter_elapsed.toFixed(2)}s` : "";
    card.querySelector(".state").textContent = (data.error ? t("failed") : t("done")) + secs;
    const body = card.querySelector(".body");
    body.append(el("h3", null, t("observation")), el("pre", "observation", data.error || data.observation || ""));
  }

  function onEvent(channel, data) {
    const turn = channel === "compact" ? null : currentTurn();
    switch (channel) {
      case "step":
        if (data.type === "thinking" && data.status === "start") turn.status.textContent = t("thinking");
        else if (data.type === "thinking" && data.status === "done" && data.reasoning) turn.reasoning[data.iteration] = data.reasoning;
        else if (data.type === "iteration" && data.status === "start") {
          toolCard(turn, data);
          turn.status.textContent = `${data.tool_name} ${t("running")}`;
        } else if (data.type === "iteration" && data.status === "done") finishCard(turn, data);
        else if (data.type === "answer") turn.status.textContent = t("writing");
        break;
      case "phase":
        turn.status.textContent = t("selecting");
        break;
      case "answer":
        if (data.status === "start") turn.status.textContent = t("writing");
        else if (data.status === "delta") {
          turn.text += data.content || "";
          renderRich(turn.bubble, turn.text);
        } else if (data.status === "done") turn.status.textContent = "";
        break;
      case "compact": {
        const li = el("li", "divider", t("compact", data.original_messages, data.kept_messages));
        li.setAttribute("role", "separator");
        log.appendChild(li);
        break;
      }
      case "inject": {
        let text = data.content || "";
        if (text.startsWith(INTERRUPT_PREFIX)) text = text.slice(INTERRUPT_PREFIX.length).trim();
        turn.tools.appendChild(el("div", "note", t("injected", text)));
        break;
      }
      case "done": {
        if (data.answer && data.answer !== turn.text) {
          turn.text = data.answer;
          renderRich(turn.bubble, data.answer);
        }
        const tokens = (data.usage && data.usage.total_tokens) || 0;
        turn.footer.textContent = t("footer", data.iterations, tokens, Number(data.elapsed || 0).toFixed(1));
        turn.status.textContent = "";
        turn.bubble.setAttribute("aria-busy", "false");
        turn.finished = true;
        if (!data.error) addFeedback(turn.li, data.run_id);
        break;
      }
    }
    scrollDown();
  }

  // ---- 👍 / 👎 on a finished answer: POST api/threads/<thread>/feedback -------------------

  // A drawn thumb, not the 👍 character: a system without an emoji font shows an empty box instead.
  function thumbIcon() {
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("aria-hidden", "true");
    const path = document.createElementNS(ns, "path");
    path.setAttribute("d", "M14 9V5a3 3 0 0 0-3-3l-4 9v11h11.3a2 2 0 0 0 2-1.7l1.4-9a2 2 0 0 0-2-2.3zM7 22H4a2 2 0 0 1-2-2v-7a2 2 0 0 1 2-2h3");
    svg.append(path);
    return svg;
  }

  // `run` (the `done` event's run_id, or the history's) names the answer, so a vote on an earlier
  // answer goes to that answer; without it the server takes the thread's latest.
  function addFeedback(li, run) {
    const row = el("div", "feedback");
    row.append(el("span", "feedback-label", t("helpful")));
    const thread = state.thread;
    for (const [vote, emoji] of [["up", "👍"], ["down", "👎"]]) {
      const button = el("button", "feedback-" + vote);
      button.append(thumbIcon());
      button.title = emoji;
      button.type = "button";
      button.setAttribute("aria-label", vote === "up" ? "👍 helpful" : "👎 not helpful");
      button.addEventListener("click", async () => {
        const body = { vote };
        if (run) body.run = run;
        if (vote === "down") {
          const comment = window.prompt(t("comment_prompt"), "");
          if (comment) body.comment = comment.slice(0, 500);
        }
        const response = await fetch(`api/threads/${thread}/feedback`, {
          method: "POST",
          headers: headers({ "Content-Type": "application/json" }),
          credentials: "same-origin",
          body: JSON.stringify(body),
        });
        if (response.ok) {
          row.dataset.vote = vote;
          row.querySelector(".feedback-label").textContent = t("rated");
        }
      });
      row.append(button);
    }
    li.append(row);
  }

  // ---- HTTP --------------------------------------------------------------------------------------

  function headers(extra) {
    const h = Object.assign({}, extra || {});
    if (state.token) h["Authorization"] = "Bearer " + state.token;
    return h;
  }

  async function readEvents(response) {
    // The SSE wire format, read from a fetch body (EventSource cannot POST or send a bearer token).
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let sawDone = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let event = "message";
        let id = null;
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const val = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "event") event = val;
          else if (field === "data") data.push(val);
          else if (field === "id") id = val;
        }
        if (!data.length) continue;
        if (id) state.lastEventId = id;
        let payload;
        try {
          payload = JSON.parse(data.join("\n"));
        } catch (e) {
          continue;
        }
        onEvent(event, payload);
        if (event === "done") sawDone = true;
      }
    }
    return sawDone;
  }

  async function follow(response) {
    state.reading = true;
    try {
      let attempts = 0;
      for (;;) {
        try {
          await readEvents(response);
          return;
        } catch (e) {
          // The connection broke mid-stream: resume after the last event we saw.
          if (++attempts > 5) {
            showNotice(t("lost"));
            return;
          }
          showNotice(t("network"));
          await new Promise((r) => setTimeout(r, 500 * attempts));
          try {
            response = await fetch(`api/threads/${state.thread}/events`, {
              headers: headers(state.lastEventId ? { "Last-Event-ID": state.lastEventId } : {}),
              credentials: "same-origin",
            });
          } catch (err) {
            continue;
          }
          if (response.status !== 200) return;
          showNotice("");
        }
      }
    } finally {
      state.reading = false;
      if (state.turn && !state.turn.finished) state.turn.status.textContent = "";
    }
  }

  async function errorText(response) {
    if (response.status === 429) return t("rate", response.headers.get("Retry-After") || "60");
    if (response.status === 401) return t("token");
    if (response.status === 503) return t("no_llm");
    try {
      const body = await response.json();
      return body.message || `HTTP ${response.status}`;
    } catch (e) {
      return `HTTP ${response.status}`;
    }
  }

  async function send(text) {
    const bubble = addUser(text);
    let response;
    try {
      response = await fetch("api/chat", {
        method: "POST",
        headers: headers({ "Content-Type": "application/json" }),
        body: JSON.stringify({ thread: state.thread, message: text }),
        credentials: "same-origin",
      });
    } catch (e) {
      showNotice(t("lost"));
      return;
    }
    if (response.status === 202) {
      bubble.appendChild(el("div", "note", t("joined")));
      return;
    }
    if (!response.ok) {
      bubble.appendChild(el("div", "note", "⚠ " + (await errorText(response))));
      return;
    }
    showNotice("");
    if (state.turn && state.turn.finished) state.turn = null;
    await follow(response);
  }

  async function loadHistory() {
    const response = await fetch(`api/threads/${state.thread}`, { headers: headers(), credentials: "same-origin" });
    if (response.status !== 200) return;
    const body = await response.json();
    for (const m of body.messages) {
      if (m.role === "user") addUser(m.content);
      else {
        const li = addBotText(m.content);
        if (m.run) addFeedback(li, m.run);
      }
    }
    scrollDown();
    if (body.running) {
      const live = await fetch(`api/threads/${state.thread}/events`, { headers: headers(), credentials: "same-origin" });
      if (live.status === 200) follow(live);
    }
  }

  async function start() {
    applyLanguage();
    try {
      const response = await fetch("api/status", { headers: headers(), credentials: "same-origin" });
      if (!response.ok) {
        showNotice(await errorText(response));
        return;
      }
      const status = await response.json();
      state.identity = status.identity;
      if (status.max_message_chars) input.maxLength = status.max_message_chars;
      applyLanguage();
      if (!status.llm) showNotice(t("no_llm") + (status.message ? "\n" + t("operator") + status.message : ""));
      await loadHistory();
    } catch (e) {
      showNotice(t("lost"));
    }
  }

  // ---- input -------------------------------------------------------------------------------------

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    input.value = "";
    autosize();
    send(text);
  });

  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });

  function autosize() {
    input.style.height = "auto";
    input.style.height = Math.min(input.scrollHeight, 160) + "px";
  }
  input.addEventListener("input", autosize);

  $("lang").addEventListener("click", () => {
    state.lang = state.lang === "ko" ? "en" : "ko";
    applyLanguage();
  });

  // A page that embeds the widget in an iframe may hand over a fresh token.
  window.addEventListener("message", (event) => {
    if (event.source !== window.parent || !event.data || event.data.type !== "arca-token") return;
    if (typeof event.data.token === "string") {
      state.token = event.data.token;
      storeToken(event.data.token);
    }
  });

  start();
})();
