/*
 * The chat widget of a web inbox. A site embeds it with one tag (the inbox's widgetSnippet):
 *   <script src="https://…/api/v1/widget/<inboxId>/widget.js" async></script>
 * optionally with data-title="…" and data-color="#0b5fff". Plain script, no dependencies: a launcher
 * button and a chat window in a Shadow DOM (the site's CSS does not reach in, ours does not leak out).
 * The visitor's anonymous session token is kept in the site's localStorage so a reload resumes the
 * conversation; it identifies the visitor's chat only and is no account credential.
 */
(() => {
  'use strict';
  const script = document.currentScript;
  if (!script || !script.src) return;
  const source = new URL(script.src);
  const match = /^(.*)\/api\/v1\/widget\/([^/]+)\/widget\.js$/.exec(source.pathname);
  if (!match) return;
  const inboxId = decodeURIComponent(match[2]);
  const registry = (window.__chatWidgets = window.__chatWidgets || {});
  if (registry[inboxId]) return;
  registry[inboxId] = true;

  const api = `${source.origin}${match[1]}/api/v1/widget/${encodeURIComponent(inboxId)}`;
  const storageKey = `chat-widget:${inboxId}`;
  const title = (script.dataset.title || 'Chat with us').slice(0, 80);
  const color = /^#[0-9a-fA-F]{3,8}$/.test(script.dataset.color || '') ? script.dataset.color : '#0b5fff';

  const store = {
    get() {
      try {
        return localStorage.getItem(storageKey);
      } catch {
        return null;
      }
    },
    set(value) {
      try {
        if (value) localStorage.setItem(storageKey, value);
        else localStorage.removeItem(storageKey);
      } catch {
        /* storage refused: the session lasts this page */
      }
    },
  };

  // ------------------------------------------------------------------ the elements
  const host = document.createElement('div');
  host.setAttribute('data-chat-widget', inboxId);
  host.style.cssText = 'all: initial; position: fixed; right: 20px; bottom: 20px; z-index: 2147483000;';
  const root = host.attachShadow({ mode: 'open' });
  const style = document.createElement('style');
  style.textContent = `
    :host { all: initial; }
    * { box-sizing: border-box; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
    .launcher { width: 56px; height: 56px; border-radius: 50%; border: 0; background: ${color}; color: #fff; cursor: pointer;
      box-shadow: 0 4px 14px rgba(0,0,0,.25); display: grid; place-items: center; position: absolute; right: 0; bottom: 0; }
    .launcher:focus-visible, button:focus-visible, input:focus-visible { outline: 3px solid #ffbf47; outline-offset: 2px; }
    .launcher svg { width: 26px; height: 26px; fill: currentColor; }
    .launcher.unread::after { content: ""; position: absolute; top: 4px; right: 4px; width: 12px; height: 12px; border-radius: 50%; background: #e5484d; border: 2px solid #fff; }
    .panel { position: absolute; right: 0; bottom: 72px; width: min(360px, calc(100vw - 40px)); height: min(520px, calc(100vh - 112px));
      background: #fff; color: #1c2024; border-radius: 12px; box-shadow: 0 8px 30px rgba(0,0,0,.22); display: flex; flex-direction: column; overflow: hidden; }
    .panel[hidden] { display: none; }
    header { background: ${color}; color: #fff; padding: 14px 16px; font-size: 15px; font-weight: 600; }
    .log { flex: 1; overflow-y: auto; padding: 12px; display: flex; flex-direction: column; gap: 8px; background: #f7f8fa; font-size: 14px; line-height: 1.4; }
    .empty { color: #60646c; text-align: center; margin: auto 0; font-size: 13px; }
    .msg { max-width: 80%; padding: 8px 12px; border-radius: 14px; white-space: pre-wrap; overflow-wrap: anywhere; }
    .msg.in { align-self: flex-end; background: ${color}; color: #fff; border-bottom-right-radius: 4px; }
    .msg.out { align-self: flex-start; background: #fff; border: 1px solid #e0e1e6; border-bottom-left-radius: 4px; }
    .who { display: block; font-size: 11px; color: #60646c; margin-bottom: 2px; }
    .error { color: #ce2c31; font-size: 12px; padding: 0 12px 6px; background: #f7f8fa; }
    .error:empty { display: none; }
    form { display: flex; gap: 8px; padding: 10px; border-top: 1px solid #e0e1e6; background: #fff; }
    input { flex: 1; min-width: 0; font-size: 14px; padding: 9px 10px; border: 1px solid #cdced6; border-radius: 8px; color: #1c2024; background: #fff; }
    form button { border: 0; border-radius: 8px; padding: 0 14px; background: ${color}; color: #fff; font-size: 14px; font-weight: 600; cursor: pointer; }
    form button:disabled { opacity: .6; cursor: default; }
  `;
  const el = (tag, attrs = {}, text) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const launcher = el('button', { type: 'button', class: 'launcher', 'aria-label': 'Open chat', 'aria-expanded': 'false', 'aria-controls': 'chat-panel' });
  const ICON_CHAT = '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H8l-4 4V6a2 2 0 0 1 2-2z"/></svg>';
  const ICON_CLOSE =
    '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M6.4 5 12 10.6 17.6 5 19 6.4 13.4 12l5.6 5.6-1.4 1.4-5.6-5.6L6.4 19 5 17.6 10.6 12 5 6.4z"/></svg>';
  launcher.innerHTML = ICON_CHAT;
  const panel = el('section', { id: 'chat-panel', class: 'panel', role: 'dialog', 'aria-label': title });
  panel.hidden = true;
  const header = el('header', {}, title);
  const log = el('div', { class: 'log', role: 'log', 'aria-label': 'Messages', 'aria-live': 'polite', tabindex: '0' });
  const empty = el('p', { class: 'empty' }, 'Ask us anything — we usually answer within minutes.');
  log.append(empty);
  const error = el('div', { class: 'error', role: 'alert' });
  const form = el('form');
  const input = el('input', {
    type: 'text',
    name: 'message',
    'aria-label': 'Message',
    placeholder: 'Write a message…',
    maxlength: '4096',
    autocomplete: 'off',
  });
  const send = el('button', { type: 'submit' }, 'Send');
  form.append(input, send);
  panel.append(header, log, error, form);
  root.append(style, panel, launcher);

  // ------------------------------------------------------------------ messages
  const shown = new Map();
  const WHO = { bot: 'Bot', human: 'Agent', campaign: 'Agent' };
  function show(message) {
    if (!message || typeof message.id !== 'string') return;
    let node = shown.get(message.id);
    if (!node) {
      node = el('div', { class: `msg ${message.direction === 'in' ? 'in' : 'out'}`, 'data-id': message.id });
      if (message.direction !== 'in') node.append(el('span', { class: 'who' }, WHO[message.sender] || 'Agent'));
      node.append(document.createTextNode(String(message.text)));
      shown.set(message.id, node);
      empty.remove();
      // In id order (ids grow with time): a late replayed message goes where it belongs.
      let after = null;
      for (const other of log.children)
        if (other.dataset.id && other.dataset.id > message.id) {
          after = other;
          break;
        }
      const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
      log.insertBefore(node, after);
      if (atBottom || message.direction === 'in') log.scrollTop = log.scrollHeight;
      if (panel.hidden && message.direction !== 'in' && live) launcher.classList.add('unread');
    }
  }

  // ------------------------------------------------------------------ session and stream
  let token = store.get();
  let opening = null;
  let source_ = null;
  let live = false;
  let retryMs = 1000;
  /** The stream's last event id: a reconnect replays only what changed after it (`since`). */
  let lastId = null;

  async function call(path, options = {}) {
    const headers = { 'content-type': 'application/json' };
    if (token) headers['x-widget-session'] = token;
    return fetch(`${api}${path}`, { method: 'POST', mode: 'cors', credentials: 'omit', headers, body: JSON.stringify(options.body || {}) });
  }

  /** Opens (or resumes) the visitor's session, then its stream. */
  function session() {
    opening =
      opening ||
      (async () => {
        const res = await call('/sessions');
        if (!res.ok) throw new Error(`session: ${res.status}`);
        const body = await res.json();
        if (body.sessionToken !== token) {
          token = body.sessionToken;
          store.set(token);
          shown.clear();
          lastId = null;
          log.replaceChildren(empty);
        }
        connect();
        return token;
      })().finally(() => {
        opening = null;
      });
    return opening;
  }

  function connect() {
    if (source_) source_.close();
    live = false;
    const since = lastId === null ? '' : `&since=${encodeURIComponent(lastId)}`;
    const events = new EventSource(`${api}/events?session=${encodeURIComponent(token)}${since}`);
    source_ = events;
    events.addEventListener('open', () => {
      retryMs = 1000;
      setTimeout(() => {
        if (source_ === events) live = true;
      }, 500);
    });
    events.addEventListener('message', (e) => {
      if (e.lastEventId) lastId = e.lastEventId;
      try {
        show(JSON.parse(e.data));
      } catch {
        /* not a message */
      }
    });
    events.addEventListener('reset', () => connect());
    events.addEventListener('error', () => {
      if (source_ !== events) return;
      if (events.readyState !== EventSource.CLOSED) {
        // A dropped connection: the browser's own reconnect would not say `since`, so reconnect here.
        events.close();
        source_ = null;
        setTimeout(() => {
          if (!source_) connect();
        }, retryMs);
        retryMs = Math.min(retryMs * 2, 60000);
        return;
      }
      // A refused stream (an expired session) is closed: open a session again.
      source_ = null;
      setTimeout(() => {
        session().catch(() => {});
      }, retryMs);
      retryMs = Math.min(retryMs * 2, 60000);
    });
  }

  async function post(text) {
    if (!token) await session();
    let res = await call('/messages', { body: { text } });
    if (res.status === 401) {
      token = null;
      store.set(null);
      await session();
      res = await call('/messages', { body: { text } });
    }
    if (!res.ok) {
      const body = await res.json().catch(() => ({}));
      throw new Error(res.status === 429 ? 'You are sending messages too fast; wait a moment.' : body.message || 'The message was not sent.');
    }
    show((await res.json()).message);
  }

  // ------------------------------------------------------------------ behaviour
  function toggle(open) {
    panel.hidden = !open;
    launcher.setAttribute('aria-expanded', String(open));
    launcher.setAttribute('aria-label', open ? 'Close chat' : 'Open chat');
    launcher.innerHTML = open ? ICON_CLOSE : ICON_CHAT;
    if (!open) return;
    launcher.classList.remove('unread');
    input.focus();
    log.scrollTop = log.scrollHeight;
    if (!source_)
      session().catch(() => {
        error.textContent = 'The chat is not available right now.';
      });
  }
  launcher.addEventListener('click', () => toggle(panel.hidden));
  panel.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      toggle(false);
      launcher.focus();
    }
  });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    send.disabled = true;
    error.textContent = '';
    // Cleared as it leaves (the stream may show the message before the POST answers); a message
    // that was not sent comes back into the box unless the visitor has started another.
    input.value = '';
    try {
      await post(text.slice(0, 4096));
    } catch (err) {
      if (!input.value) input.value = text;
      error.textContent = err instanceof Error && err.message ? err.message : 'The message was not sent.';
    } finally {
      send.disabled = false;
      input.focus();
    }
  });

  const mount = () => {
    document.body.append(host);
    // A returning visitor: the conversation and its replies come back at once.
    if (token) session().catch(() => {});
  };
  if (document.body) mount();
  else document.addEventListener('DOMContentLoaded', mount);
})();
