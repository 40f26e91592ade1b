// Arca support widget: files with a message (screenshots, .txt/.log). A 📎 button, drag and drop onto the
// chat, or paste; each file is uploaded to api/attachments when the message is sent, and the message names
// the kept ones. A refused file gets a clear sentence in the player's language; the text is sent anyway.
// Names are set with textContent, never parsed as HTML (loaded before widget.js).
"use strict";

window.ArcaWidgetAttach = (function () {
  const { el } = window.ArcaWidgetDom;
  const ACCEPT = "image/png,image/jpeg,image/webp,image/gif,.txt,.log";
  const TEXT = {
    ko: {
      button: "파일 첨부",
      remove: (name) => `${name} 빼기`,
      too_large: (name, size, limit) => `첨부 파일이 너무 커서 보내지 않았습니다: '${name}' ${size} (최대 ${limit}). 메시지에는 답변드릴게요.`,
      failed: (name) => `첨부 파일을 보내지 못했습니다: '${name}'`,
      attached: (name) => `첨부: ${name}`,
    },
    en: {
      button: "Attach a file",
      remove: (name) => `Remove ${name}`,
      too_large: (name, size, limit) => `The attachment '${name}' is ${size}, over the ${limit} limit. The file was not sent; your message will still be answered.`,
      failed: (name) => `The attachment '${name}' could not be sent.`,
      attached: (name) => `Attached: ${name}`,
    },
  };

  // A paperclip drawn as SVG: an emoji needs a font the player's system may not have.
  function clipIcon() {
    const NS = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("width", "20");
    svg.setAttribute("height", "20");
    svg.setAttribute("aria-hidden", "true");
    const path = document.createElementNS(NS, "path");
    path.setAttribute("d", "M16.5 6.5v10a4.5 4.5 0 0 1-9 0V5a3 3 0 0 1 6 0v10.5a1.5 1.5 0 0 1-3 0V6.5");
    path.setAttribute("fill", "none");
    path.setAttribute("stroke", "currentColor");
    path.setAttribute("stroke-width", "1.8");
    path.setAttribute("stroke-linecap", "round");
    svg.appendChild(path);
    return svg;
  }

  function sizeText(bytes) {
    if (bytes >= 1024 * 1024) return (bytes / (1024 * 1024)).toFixed(1) + " MB";
    if (bytes >= 1024) return Math.round(bytes / 1024) + " KB";
    return bytes + " B";
  }

  // `composer` the form, `dropZone` the chat, `headers()` the request headers, `lang()` the page language.
  function create({ composer, input, dropZone, headers, lang }) {
    const state = { files: [], max: 8 * 1024 * 1024 };
    const t = (key, ...args) => {
      const v = (TEXT[lang()] || TEXT.ko)[key];
      return typeof v === "function" ? v(...args) : v;
    };
    const picker = el("input");
    picker.type = "file";
    picker.multiple = true;
    picker.accept = ACCEPT;
    picker.hidden = true;
    picker.id = "attach-input";
    const button = el("button", "attach");
    button.type = "button";
    button.appendChild(clipIcon());
    button.id = "attach";
    const chips = el("ul", "pending-files");
    chips.id = "pending-files";
    chips.hidden = true;
    composer.insertBefore(button, composer.firstChild);
    composer.appendChild(picker);
    composer.parentNode.insertBefore(chips, composer);

    function label() {
      button.setAttribute("aria-label", t("button"));
      button.title = t("button");
    }

    function draw() {
      chips.replaceChildren();
      state.files.forEach((file, index) => {
        const li = el("li", "chip", `${file.name} · ${sizeText(file.size)}`);
        const x = el("button", "chip-remove", "✕");
        x.type = "button";
        x.setAttribute("aria-label", t("remove", file.name));
        x.addEventListener("click", () => {
          state.files.splice(index, 1);
          draw();
        });
        li.appendChild(x);
        chips.appendChild(li);
      });
      chips.hidden = state.files.length === 0;
    }

    function add(list) {
      for (const file of list) if (state.files.length < 10) state.files.push(file);
      draw();
    }

    button.addEventListener("click", () => picker.click());
    picker.addEventListener("change", () => {
      add(picker.files);
      picker.value = "";
    });
    input.addEventListener("paste", (event) => {
      const files = event.clipboardData ? Array.from(event.clipboardData.files) : [];
      if (files.length) {
        event.preventDefault();
        add(files);
      }
    });
    dropZone.addEventListener("dragover", (event) => {
      if (event.dataTransfer && Array.from(event.dataTransfer.types).includes("Files")) {
        event.preventDefault();
        dropZone.classList.add("dropping");
      }
    });
    dropZone.addEventListener("dragleave", () => dropZone.classList.remove("dropping"));
    dropZone.addEventListener("drop", (event) => {
      dropZone.classList.remove("dropping");
      if (event.dataTransfer && event.dataTransfer.files.length) {
        event.preventDefault();
        add(event.dataTransfer.files);
      }
    });

    // Upload the pending files: `{ids, names, refusals}`; `replyLang` is the language of the message.
    async function take(replyLang) {
      const files = state.files.splice(0);
      draw();
      const out = { ids: [], names: [], refusals: [] };
      const say = (key, ...args) => {
        const v = (TEXT[replyLang] || TEXT.ko)[key];
        return typeof v === "function" ? v(...args) : v;
      };
      for (const file of files) {
        if (file.size > state.max) {
          out.refusals.push(say("too_large", file.name, sizeText(file.size), sizeText(state.max)));
          continue;
        }
        try {
          const query = new URLSearchParams({ name: file.name, lang: replyLang });
          const response = await fetch("api/attachments?" + query, {
            method: "POST",
            headers: headers({ "Content-Type": "application/octet-stream" }),
            body: file,
            credentials: "same-origin",
          });
          const body = await response.json().catch(() => ({}));
          if (response.status === 201) {
            out.ids.push(body.id);
            out.names.push(body.name);
          } else out.refusals.push(body.message || say("failed", file.name));
        } catch (e) {
          out.refusals.push(say("failed", file.name));
        }
      }
      return out;
    }

    // A stored message's files come as names (`files` in the thread history); the model's notes on
    // them never reach the page.
    function addUserWithFiles(addUser, content, names) {
      const li = addUser(content);
      for (const name of names || []) li.appendChild(el("div", "files", t("attached", name)));
      return li;
    }

    label();
    return {
      addUserWithFiles,
      take,
      label,
      pending: () => state.files.length,
      setMax: (bytes) => {
        if (bytes > 0) state.max = bytes;
      },
      attachedText: (name) => t("attached", name),
    };
  }

  return { create };
})();
