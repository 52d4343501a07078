// Keeping secrets and noise out of what bds prints: signed URLs (tokens in the query or the path), proxy
// credentials, bodies that are not the API's JSON (an HTML page from a proxy, an XML error from a storage host)
// reduced to one line, and server text made safe for a terminal (by clean-text.ts, the one cleaner).

import type { IncomingHttpHeaders } from 'node:http';
import { cleanText } from '../clean-text.js';

/** Query parameters whose values are credentials (signatures of pre-signed URLs, tokens). */
const SECRET_PARAM = /sig|signature|token|key|credential|secret|auth|password|policy/i;

/**
 * A path segment that looks like a credential (the token of a signed or webhook URL, a UUID): 20 characters or
 * more of letters, digits and `-_~+=:%`, letters and digits both, and not an id of the API's form (a lower-case
 * prefix, `_`, then lower-case letters and digits: bat_6625990b0513ec2d). Words, dates and file names (a `.`)
 * stay readable.
 */
const SECRET_SEGMENT = /^(?=.*[A-Za-z])(?=.*\d)[\w~+=:%-]{20,}$/;
const API_ID = /^[a-z]{2,8}_[a-z0-9]+$/;

export function redactUrl(input: URL | string): string {
  let url: URL;
  try {
    url = new URL(String(input));
  } catch {
    return '(an invalid URL)';
  }
  if (url.username || url.password) {
    url.username = url.username ? 'REDACTED' : '';
    url.password = '';
  }
  url.pathname = url.pathname
    .split('/')
    .map((segment) => (SECRET_SEGMENT.test(segment) && !API_ID.test(segment) ? 'REDACTED' : segment))
    .join('/');
  for (const name of [...url.searchParams.keys()]) {
    if (SECRET_PARAM.test(name)) url.searchParams.set(name, 'REDACTED');
  }
  return url.toString();
}

/** The message of an error body: `error.message`, `message` or `error`, or a summary of a foreign body. */
export function errorMessage(text: string, headers: IncomingHttpHeaders): string | undefined {
  const json = parseObject(text);
  if (json) {
    const error = json.error;
    if (error && typeof error === 'object') {
      const message = (error as Record<string, unknown>).message;
      if (typeof message === 'string' && message) return cleanText(message);
    }
    if (typeof json.message === 'string' && json.message) return cleanText(json.message);
    if (typeof error === 'string' && error) return cleanText(error);
  }
  return text.trim() ? describeBody(text, headers) : undefined;
}

/** `error.code` (or a storage host's XML `<Code>`), for the decisions the client makes on errors. */
export function errorCode(text: string, headers: IncomingHttpHeaders): string | undefined {
  const error = parseObject(text)?.error;
  if (error && typeof error === 'object') {
    const code = (error as Record<string, unknown>).code;
    if (typeof code === 'string') return code;
  }
  return isXml(text, headers) ? xmlElement(text, 'Code') : undefined;
}

/** The limit a storage host's EntityTooLarge answer names (S3's MaxSizeAllowed), in bytes. */
export function maxSizeAllowed(text: string, headers: IncomingHttpHeaders): number | undefined {
  const value = isXml(text, headers) ? Number(xmlElement(text, 'MaxSizeAllowed')) : NaN;
  return Number.isSafeInteger(value) ? value : undefined;
}

/** One line about a body that is not what the API sends: never the body itself. */
export function describeBody(text: string, headers: IncomingHttpHeaders): string {
  const type = cleanText(String(headers['content-type'] ?? 'no content type').split(';')[0]!, 80);
  const size = `${Buffer.byteLength(text)} bytes`;
  if (isXml(text, headers)) {
    const code = xmlElement(text, 'Code');
    const message = xmlElement(text, 'Message');
    if (code || message) return [code, message].filter(Boolean).join(': ');
  }
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1];
  if (title) return `an HTML page titled "${cleanText(title, 80)}" (${type}, ${size})`;
  if (/^\s*</.test(text)) return `a ${type} document (${size})`;
  if (!text.trim()) return `an empty body (${type})`;
  return `"${cleanText(text, 80)}" (${type}, ${size})`;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function isXml(text: string, headers: IncomingHttpHeaders): boolean {
  return /xml/i.test(String(headers['content-type'] ?? '')) || /^\s*<\?xml/.test(text);
}

function xmlElement(text: string, name: string): string | undefined {
  const value = new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1];
  return value === undefined ? undefined : cleanText(value);
}
