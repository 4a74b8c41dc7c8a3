// The web approval page's script (an ES module, served by the API at
// /approve/app.js; no build step, no CDN). It lists the pending queue,
// re-derives each proposal's hash from the signed entry the log holds and
// checks the agent's signature, so what the approver reads is exactly what
// the agent signed. It then builds the `human.response` statement exactly as
// the core does (schemas/SPEC.md section 4: RFC 8785 canonical bytes, the
// domain-separated signing message), signs it with the approver's
// non-extractable WebCrypto Ed25519 key kept in this browser, verifies the
// signature by the system's verdict rule (SPEC.md section 3, with
// @noble/ed25519's point arithmetic), and POSTs
// the envelope to /v1/statements, where the ledger judges it like any other.
// Every read (the queue, a proposal, the live stream) is signed with the same
// key (packages/client/src/read-auth.ts): the API shows the queue to
// registered approvers only.
import * as ed from './vendor/noble-ed25519.js';
import { sha256, sha512 } from './vendor/noble-hashes/sha2.js';

if (ed.hashes.sha512 === undefined) ed.hashes.sha512 = sha512;

const SIGNING_CONTEXT = 'agent-ledger/statement/v1\n';
const L = (1n << 252n) + 27742317777372353535851937790883648493n;
const HEX64 = /^[0-9a-f]{64}$/;
const utf8 = new TextEncoder();

/** Lowercase hex of bytes. */
function toHex(bytes) {
  let out = '';
  for (const b of bytes) out += b.toString(16).padStart(2, '0');
  return out;
}

/** Bytes of lowercase hex (checked by the caller). */
function fromHex(hex) {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** Standard padded base64 (RFC 4648 section 4). */
function toBase64(bytes) {
  let text = '';
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text);
}

/** Bytes of standard base64 (untrusted): null unless it is the canonical text of `length` bytes. */
function fromBase64(text, length) {
  if (typeof text !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return null;
  let raw;
  try {
    raw = atob(text);
  } catch {
    return null;
  }
  const bytes = Uint8Array.from(raw, (c) => c.charCodeAt(0));
  return bytes.length === length && toBase64(bytes) === text ? bytes : null;
}

/**
 * RFC 8785 canonical JSON, refusing what JCS cannot represent faithfully
 * (the same refusals as packages/ledger-core/src/jcs.ts).
 */
function canonicalJson(value) {
  switch (typeof value) {
    case 'string':
      if (!value.isWellFormed()) throw new Error('lone surrogate in a string');
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value) || Object.is(value, -0)) throw new Error(`${value} is not canonicalisable`);
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) throw new Error('integer beyond 2^53-1');
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
      const keys = Object.keys(value).sort();
      return `{${keys.map((k) => {
        if (!k.isWellFormed()) throw new Error('lone surrogate in a member name');
        return `${JSON.stringify(k)}:${canonicalJson(value[k])}`;
      }).join(',')}}`;
    }
    default:
      throw new Error(`${typeof value} is not a JSON value`);
  }
}

/** SHA-256 hex of a statement's canonical bytes: how statements name each other. */
function statementHash(statement) {
  return toHex(sha256(utf8.encode(canonicalJson(statement))));
}

/** The bytes an author signs: the context prefix, then the canonical statement. */
function signingMessage(statement) {
  const context = utf8.encode(SIGNING_CONTEXT);
  const body = utf8.encode(canonicalJson(statement));
  const message = new Uint8Array(context.length + body.length);
  message.set(context, 0);
  message.set(body, context.length);
  return message;
}

function littleEndian(bytes) {
  let hex = '';
  for (let i = bytes.length - 1; i >= 0; i--) hex += bytes[i].toString(16).padStart(2, '0');
  return hex === '' ? 0n : BigInt(`0x${hex}`);
}

/**
 * The system's verdict rule (SPEC.md section 3, OpenSSL's cofactorless
 * check), not noble's cofactored `verify`: S < L; A decoded leniently;
 * k = SHA-512(R || A || M) mod L; accept iff encode([S]B - [k]A) equals R.
 */
function verifySignature(publicKey, message, signature) {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  try {
    const encodedR = signature.subarray(0, 32);
    const S = littleEndian(signature.subarray(32, 64));
    if (S >= L) return false;
    const A = ed.Point.fromBytes(publicKey, true);
    const digest = new Uint8Array(64 + message.length);
    digest.set(encodedR, 0);
    digest.set(publicKey, 32);
    digest.set(message, 64);
    const k = littleEndian(sha512(digest)) % L;
    const recomputed = ed.Point.BASE.multiply(S, false).subtract(A.multiply(k, false));
    const bytes = recomputed.toBytes();
    let diff = 0;
    for (let i = 0; i < 32; i++) diff |= bytes[i] ^ encodedR[i];
    return diff === 0;
  } catch {
    return false;
  }
}

/** A UUIDv7 (RFC 9562 section 5.7) whose 48-bit timestamp is `millis`. */
function uuidv7(millis) {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let t = millis;
  for (let i = 5; i >= 0; i--) {
    bytes[i] = t % 256;
    t = Math.floor(t / 256);
  }
  bytes[6] = 0x70 | (bytes[6] & 0x0f);
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  const hex = toHex(bytes);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Checks an envelope's single signature (by `author.keyId`) under the verdict rule. */
function envelopeVerifies(envelope) {
  const statement = envelope?.statement;
  const signatures = envelope?.signatures;
  if (typeof statement !== 'object' || statement === null || !Array.isArray(signatures) || signatures.length !== 1) return false;
  const [{ keyId, sig }] = signatures;
  if (typeof keyId !== 'string' || !HEX64.test(keyId) || keyId !== statement.author?.keyId) return false;
  const signature = fromBase64(sig, 64);
  return signature !== null && verifySignature(fromHex(keyId), signingMessage(statement), signature);
}

// ---------------------------------------------------------------------------
// The approver's key: a WebCrypto key kept in this browser (below).

let approver = null;

const READ_CONTEXT = 'agent-ledger/read/v2\n';

/** This installation's id (the genesis statement hash), which every signed read names: asked of the API once. */
let audience = null;
async function installation() {
  if (audience !== null) return audience;
  const response = await fetch('/v1/installation');
  const body = await response.json().catch(() => null);
  if (response.status !== 200 || typeof body?.installation !== 'string' || !HEX64.test(body.installation)) throw new Error('the API did not say which installation it serves');
  audience = body.installation;
  return audience;
}

/**
 * A signed read: the approver's key signs the method, the installation, the
 * path with its query, the time and a fresh nonce (no body), as the API
 * checks them (docs/http.md "Signed reads").
 */
async function signedGet(path, init = {}) {
  // No key yet: unsigned (answered only by an installation that chose open reads).
  if (approver === null) return fetch(path, init);
  const aud = await installation();
  const ts = Date.now();
  const nonce = toHex(crypto.getRandomValues(new Uint8Array(16)));
  const message = utf8.encode(`${READ_CONTEXT}GET\n${aud}\n${path}\n${ts}\n${nonce}\n`);
  const signature = new Uint8Array(await crypto.subtle.sign('Ed25519', approver.privateKey, message));
  const authorization = `Ledger-Ed25519 keyId=${approver.keyId},aud=${aud},ts=${ts},nonce=${nonce},sig=${toBase64(signature)}`;
  return fetch(path, { ...init, headers: { authorization } });
}

function showKeyStatus(text, isError) {
  const status = document.getElementById('key-status');
  status.textContent = text;
  status.className = isError ? 'error' : '';
}

/**
 * Builds, signs, self-verifies and submits a `human.response` naming the
 * exact proposal and confirmation request. Returns the ledger's answer.
 */
async function answer(item, verdict, reason) {
  if (approver === null) throw new Error('load your approver key first');
  const millis = Date.now();
  const statement = {
    v: 1,
    id: uuidv7(millis),
    type: 'human.response',
    issuedAt: new Date(millis).toISOString(),
    author: { principal: approver.principal, keyId: approver.keyId },
    body: { agentId: item.agentId, proposal: item.proposalHash, request: item.requestHash, answer: verdict, assurance: 'self_signed', platformIdentity: null, ...(reason === '' ? {} : { reason }) },
  };
  const message = signingMessage(statement);
  const signature = new Uint8Array(await crypto.subtle.sign('Ed25519', approver.privateKey, message));
  if (!verifySignature(fromHex(approver.keyId), message, signature)) throw new Error('the signature made here does not verify; nothing was sent');
  const envelope = { statement, signatures: [{ keyId: approver.keyId, sig: toBase64(signature) }] };
  const response = await fetch('/v1/statements', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(envelope) });
  const reply = await response.json().catch(() => null);
  if (response.status !== 202) {
    const code = reply?.error?.code ?? `HTTP ${response.status}`;
    throw new Error(`refused by the ledger: ${code}: ${reply?.error?.message ?? ''}`);
  }
  const expected = statementHash(statement);
  if (reply?.statementHash !== expected) throw new Error('the ledger acknowledged a different statement hash');
  return expected;
}

// ---------------------------------------------------------------------------
// The browser key: an Ed25519 key made by WebCrypto as non-extractable, kept
// in this browser's IndexedDB. Its private half never exists as bytes the page
// (or anyone reading the page) could copy; only the public key id leaves it,
// for two admins to register with the approver role (SPEC.md section 7.3).

const DB_NAME = 'agent-ledger';
const DB_STORE = 'keys';

function database() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DB_NAME, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(DB_STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

async function stored(mode, action) {
  const db = await database();
  return new Promise((resolve, reject) => {
    const request = action(db.transaction(DB_STORE, mode).objectStore(DB_STORE));
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

function useBrowserKey(record) {
  approver = { principal: record.principal, keyId: record.keyId, privateKey: record.privateKey };
  document.getElementById('browser-key-id').textContent = record.keyId;
  document.getElementById('register-command').textContent =
    `ledger key register --principal ${record.principal} --roles approver --key-id ${record.keyId} --as admin:ALICE --out ${record.principal.split(':')[1]}.json`;
  showKeyStatus(`Signing as ${record.principal} with this browser's key ${record.keyId.slice(0, 16)}... (it signs only once registered).`, false);
  render();
  loadQueue().catch(showQueueError);
}

async function createBrowserKey() {
  const principal = document.getElementById('browser-principal').value.trim();
  if (!/^approver:[A-Za-z0-9._@-]{1,128}$/.test(principal)) throw new Error('the principal is approver:NAME');
  const pair = await crypto.subtle.generateKey({ name: 'Ed25519' }, false, ['sign', 'verify']);
  const keyId = toHex(new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey)));
  const record = { principal, keyId, privateKey: pair.privateKey };
  await stored('readwrite', (store) => store.put(record, 'approver'));
  useBrowserKey(record);
}

/**
 * Proof of possession: adds this browser key's signature to a partly signed
 * key.registered statement (written by `ledger key register ... --out FILE`),
 * and offers the result for download, for the second admin's `ledger key cosign FILE --submit`.
 */
async function proveKey(text) {
  if (approver?.privateKey === undefined) throw new Error('create the browser key first');
  let envelope;
  try {
    envelope = JSON.parse(text);
  } catch {
    throw new Error('not a statement file (not JSON)');
  }
  const statement = envelope?.statement;
  if (statement?.type !== 'key.registered' || !Array.isArray(envelope.signatures)) throw new Error('not a key.registered statement file');
  if (statement.body?.keyId !== approver.keyId) throw new Error('the file registers another key than this browser\'s');
  if (statement.body?.principal !== approver.principal) throw new Error(`the file registers ${statement.body?.principal}, not ${approver.principal}`);
  if (envelope.signatures.some((s) => s.keyId === approver.keyId)) throw new Error('this browser key already signed it');
  const message = signingMessage(statement);
  const signature = new Uint8Array(await crypto.subtle.sign('Ed25519', approver.privateKey, message));
  if (!verifySignature(fromHex(approver.keyId), message, signature)) throw new Error('the signature made here does not verify');
  envelope.signatures.push({ keyId: approver.keyId, sig: toBase64(signature) });
  const link = document.getElementById('proof-link');
  link.href = URL.createObjectURL(new Blob([`${JSON.stringify(envelope, null, 2)}\n`], { type: 'application/json' }));
  link.download = 'registration-signed.json';
  link.hidden = false;
  link.dataset.signed = JSON.stringify(envelope);
}

// ---------------------------------------------------------------------------
// The queue.

let items = [];
/** Checked proposal details by proposal hash: a proposal's signed entry never changes. */
const checked = new Map();
/** The queue as last drawn (hashes and approvals): redrawn only when it changes, so an answer in progress keeps its row. */
let drawnKey = '';

/** Fetches the pending queue and each proposal's signed entry; keeps only items that check out. */
async function loadQueue() {
  const status = document.getElementById('queue-status');
  const response = await signedGet('/v1/pending?limit=200');
  if (response.status === 401 || response.status === 403) {
    throw new Error(approver === null ? 'create a key in this browser and have it registered (below) to see the queue' : `this browser's key cannot read the queue (HTTP ${response.status}): it must be registered with the approver role`);
  }
  if (!response.ok) throw new Error(`pending queue: HTTP ${response.status}`);
  const { pending } = await response.json();
  const loaded = [];
  for (const row of pending) {
    const item = { proposalHash: row.proposalHash, requestHash: row.requestHash, agentId: row.agentId, tier: row.tier, deadline: row.deadline, approvalsRequired: row.approvalsRequired, approvedBy: row.approvedBy, problem: null, operation: null, risk: null };
    const known = checked.get(row.requestHash);
    if (known !== undefined) {
      Object.assign(item, known);
      loaded.push(item);
      continue;
    }
    try {
      const detail = await (await signedGet(`/v1/proposals/${encodeURIComponent(row.proposalHash)}`)).json();
      const statement = detail?.entry?.envelope?.statement;
      // The displayed operation must be the one whose hash the answer names.
      if (statement?.type !== 'proposal.submitted' || statementHash(statement) !== row.proposalHash) throw new Error('the proposal on the log does not match its hash');
      if (!envelopeVerifies(detail.entry.envelope)) throw new Error("the agent's signature on the proposal does not verify");
      const request = detail.request?.envelope?.statement;
      if (request?.type !== 'confirmation.requested' || statementHash(request) !== row.requestHash || request.body.proposal !== row.proposalHash) {
        throw new Error('the confirmation request does not match');
      }
      item.operation = statement.body;
      item.risk = detail.risk;
      item.deadline = request.body.deadline;
      checked.set(row.requestHash, { operation: item.operation, risk: item.risk, deadline: item.deadline });
    } catch (err) {
      item.problem = err.message;
    }
    loaded.push(item);
  }
  items = loaded;
  status.className = '';
  status.textContent = items.length === 0 ? 'Nothing is waiting for a human.' : `${items.length} pending (updated live).`;
  const key = JSON.stringify(items.map((i) => [i.requestHash, i.approvedBy, i.problem]));
  if (key !== drawnKey) {
    drawnKey = key;
    render();
  }
}

// ---------------------------------------------------------------------------
// The headline: the operation in words, its values as unbreakable tokens.

const VERBS = { 'payment.send': 'pay', 'payment.refund': 'refund', 'email.send': 'email', 'shell.exec': 'run', 'db.delete': 'delete', 'file.delete': 'delete', 'file.write': 'write' };

/** An amount argument (`amountUsd`, `amount` with `currency`...) as money text, or null. */
function amountOf(args) {
  if (args === null || typeof args !== 'object') return null;
  for (const [key, value] of Object.entries(args)) {
    const m = /^amount(?:_?([a-z]{3}))?$/i.exec(key);
    if (m === null || typeof value !== 'number' || !Number.isFinite(value)) continue;
    const currency = (m[1] ?? (typeof args.currency === 'string' ? args.currency : '')).toUpperCase();
    try {
      if (/^[A-Z]{3}$/.test(currency)) return new Intl.NumberFormat('en-US', { style: 'currency', currency, maximumFractionDigits: 2 }).format(value);
    } catch {
      // An unknown currency code: the number and the code.
    }
    return `${new Intl.NumberFormat('en-US').format(value)}${currency === '' ? '' : ` ${currency}`}`;
  }
  return null;
}

/** An IBAN argument grouped in fours, as printed on paper. */
function ibanOf(args) {
  const value = args !== null && typeof args === 'object' ? args.iban : undefined;
  return typeof value === 'string' && /^[A-Z]{2}[0-9]{2}[A-Z0-9]{8,30}$/.test(value) ? value.replace(/(.{4})(?=.)/g, '$1 ') : null;
}

function token(text, field) {
  const span = document.createElement('span');
  span.className = 'token';
  span.dataset.token = field;
  span.textContent = text;
  return span;
}

/** "billing-bot wants to pay $98,000.00 to globex-ltd IBAN DE89 ... on payments/vendors/globex": built from text nodes only. */
function headline(op) {
  const p = document.createElement('p');
  p.className = 'headline';
  const agent = op.agentId.replace(/^agent:/, '');
  const verb = VERBS[op.actionType];
  const amount = amountOf(op.args);
  const iban = ibanOf(op.args);
  p.append(token(agent, 'agent'), ` wants to ${verb ?? 'do'} `);
  if (verb === undefined) p.append(token(op.actionType, 'actionType'), ' ');
  if (amount !== null) p.append(token(amount, 'amount'), ' ');
  if (verb === 'run' && op.args !== null && typeof op.args.command === 'string') p.append(token(op.args.command, 'command'), ' ');
  if (op.recipient !== 'none') p.append(amount !== null ? 'to ' : '', token(op.recipient, 'recipient'), ' ');
  if (iban !== null) p.append('IBAN ', token(iban, 'iban'), ' ');
  p.append('on ', token(op.targetResource, 'target'));
  return p;
}

const TIER_WORDS = ['no risk', 'low risk', 'needs a human', 'high risk, needs a human', 'critical, needs a human'];

function riskLine(item) {
  const p = document.createElement('p');
  p.className = item.tier >= 3 ? 'risk risk-high' : 'risk';
  const risk = item.risk === null ? '' : `, risk score ${Number(item.risk).toFixed(2)}`;
  p.textContent = `Tier ${item.tier}: ${TIER_WORDS[item.tier] ?? 'unknown'}${risk}. Tool ${item.operation.tool}, scope ${item.operation.scope}.`;
  return p;
}

function secondsLeft(deadline) {
  return Math.max(0, Math.ceil((Date.parse(deadline) - Date.now()) / 1000));
}

function field(list, name, value) {
  const dt = document.createElement('dt');
  dt.textContent = name;
  const dd = document.createElement('dd');
  dd.textContent = value;
  dd.dataset.field = name;
  // An exact value scrolls sideways within its box: focusable, so a keyboard can scroll it too (WCAG 2.1.1).
  dd.tabIndex = 0;
  list.append(dt, dd);
}

/** Renders the queue with textContent only (proposal fields are untrusted text). */
function render() {
  const list = document.getElementById('pending');
  list.replaceChildren();
  for (const item of items) {
    const li = document.createElement('li');
    li.dataset.proposal = item.proposalHash;
    li.className = `tier-${item.tier}`;
    const head = document.createElement('p');
    const countdown = document.createElement('span');
    countdown.className = 'countdown';
    countdown.dataset.deadline = item.deadline;
    countdown.textContent = `expires in ${secondsLeft(item.deadline)}s`;
    head.append(`proposal ${item.proposalHash.slice(0, 16)}  tier ${item.tier}  `, countdown);
    li.append(head);
    if (item.problem !== null) {
      const p = document.createElement('p');
      p.className = 'error';
      p.textContent = `Not shown, not answerable: ${item.problem}`;
      li.append(p);
      list.append(li);
      continue;
    }
    const op = item.operation;
    li.prepend(headline(op));
    li.append(riskLine(item));
    const details = document.createElement('details');
    const summary = document.createElement('summary');
    summary.textContent = 'Exact signed operation';
    details.append(summary);
    const dl = document.createElement('dl');
    field(dl, 'agent', op.agentId);
    field(dl, 'tool', op.tool);
    field(dl, 'actionType', op.actionType);
    field(dl, 'targetResource', op.targetResource);
    field(dl, 'recipient', op.recipient);
    field(dl, 'scope', op.scope);
    field(dl, 'args', JSON.stringify(op.args, null, 2));
    field(dl, 'query', op.query);
    field(dl, 'tier', String(item.tier));
    field(dl, 'risk', item.risk === null ? 'unknown' : String(item.risk));
    field(dl, 'approvals', `${item.approvedBy.length} of ${item.approvalsRequired}${item.approvedBy.length > 0 ? ` (${item.approvedBy.join(', ')})` : ''}`);
    field(dl, 'proposal hash', item.proposalHash);
    details.append(dl);
    li.append(details);
    // Why a request is denied: signed into the response with the answer.
    const reasonLabel = document.createElement('label');
    reasonLabel.className = 'reason';
    reasonLabel.textContent = 'Reason (signed with a denial) ';
    const reasonInput = document.createElement('input');
    reasonInput.type = 'text';
    reasonInput.maxLength = 256;
    reasonInput.autocomplete = 'off';
    reasonInput.className = 'reason';
    reasonLabel.append(reasonInput);
    li.append(reasonLabel);
    const result = document.createElement('p');
    result.className = 'result';
    result.setAttribute('role', 'status');
    for (const verdict of ['approve', 'deny']) {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = verdict;
      button.textContent = verdict === 'approve' ? 'Approve' : 'Deny';
      button.disabled = approver === null;
      button.addEventListener('click', () => {
        for (const b of li.querySelectorAll('button')) b.disabled = true;
        result.className = 'result';
        result.textContent = 'Signing...';
        answer(item, verdict, verdict === 'deny' ? reasonInput.value.trim() : '').then(
          (hash) => {
            result.textContent = `Signed and sent: ${verdict} (statement ${hash})`;
            result.dataset.statement = hash;
          },
          (err) => {
            result.className = 'result error';
            result.textContent = err.message;
            for (const b of li.querySelectorAll('button')) b.disabled = approver === null;
          },
        );
      });
      li.append(button);
    }
    li.append(result);
    list.append(li);
  }
}

function tick() {
  for (const span of document.querySelectorAll('.countdown')) {
    const left = secondsLeft(span.dataset.deadline);
    span.textContent = left > 0 ? `expires in ${left}s` : 'expired (denied on timeout)';
  }
}

function showQueueError(err) {
  const status = document.getElementById('queue-status');
  status.className = 'error';
  status.textContent = err.message;
}

document.getElementById('browser-create').addEventListener('click', () => {
  createBrowserKey().catch((err) => showKeyStatus(err.message, true));
});
document.getElementById('proof-file').addEventListener('change', (event) => {
  const file = event.target.files?.[0];
  if (file === undefined) return;
  file.text().then(proveKey).catch((err) => showKeyStatus(err.message, true));
});
stored('readonly', (store) => store.get('approver')).then(
  (record) => {
    if (record !== undefined) useBrowserKey(record);
  },
  () => undefined,
);
setInterval(tick, 1000);

/**
 * Live: the server pushes an event whenever the queue changes (server-sent
 * events, read from a signed fetch: an EventSource cannot sign). The queue is
 * read again at each event; a dropped or refused stream is opened again,
 * freshly signed, two seconds later (so a key registered meanwhile starts to
 * see the queue by itself).
 */
async function followQueue() {
  for (;;) {
    try {
      {
        const response = await signedGet('/v1/pending/stream');
        if ((response.status === 401 || response.status === 403) && approver === null) throw new Error('create a key in this browser and have it registered (below) to see the queue');
        if (!response.ok || response.body === null) throw new Error(`live updates interrupted (HTTP ${response.status}); reconnecting...`);
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
            const event = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            if (/^event: pending$/m.test(event)) loadQueue().catch(showQueueError);
          }
        }
      }
    } catch (err) {
      showQueueError(err);
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}
followQueue();
