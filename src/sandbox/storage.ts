// The storage host: accepts uploads at signed URLs, with S3-like XML errors. Needs no API key.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { Reply, ServeContext } from './http.js';
import { serveRoute } from './http.js';
import type { SandboxStore } from './store.js';
import {
  STREAM_HIGH_WATER_MARK,
  framingRefusal,
  headerRefusal,
  answerUpload,
  digestRefusal,
  sizeRefusal,
  uploadHeaders,
  type Refusal,
} from './upload.js';

const OBJECT_PATH = /^\/objects\/([^/]+)$/;

export interface StorageContext extends ServeContext {
  store: SandboxStore;
  now: () => number;
  /** The largest body one PUT may carry; larger ones are refused from their Content-Length. */
  maxUploadBytes: number;
}

/** The signature binds method, path, expiry and the values of the headers the upload must carry. */
function sign(secret: string, method: string, path: string, expires: string, batchId: string): string {
  const headerLines = Object.entries(uploadHeaders(batchId)).map(([name, value]) => `${name.toLowerCase()}:${value}`);
  return createHmac('sha256', secret)
    .update([method, path, expires, ...headerLines].join('\n'))
    .digest('hex');
}

export function signedUploadUrl(storageUrl: string, secret: string, batchId: string, expiresAtSeconds: number): string {
  const path = `/objects/${batchId}`;
  const expires = String(expiresAtSeconds);
  return `${storageUrl}${path}?expires=${expires}&signature=${sign(secret, 'PUT', path, expires, batchId)}`;
}

function xmlError(status: number, code: string, message: string, requestId: string): Reply {
  return xmlRefusal({ status, code, message }, requestId);
}

/** S3's error document: Code, Message, the refusal's own details, RequestId. */
function xmlRefusal(refusal: Refusal, requestId: string): Reply {
  const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const elements = { Code: refusal.code, Message: refusal.message, ...refusal.details, RequestId: requestId };
  const xml =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error>${Object.entries(elements)
      .map(([name, value]) => `<${name}>${escape(value)}</${name}>`)
      .join('')}</Error>`;
  return {
    status: refusal.status,
    headers: { 'content-type': 'application/xml' },
    body: Buffer.from(xml),
    ...(refusal.closeUnread ? { closeUnread: true } : {}),
  };
}

function signatureMatches(secret: string, url: URL, batchId: string): boolean {
  const expires = url.searchParams.get('expires') ?? '';
  const given = Buffer.from(url.searchParams.get('signature') ?? '', 'utf8');
  const expected = Buffer.from(sign(secret, 'PUT', url.pathname, expires, batchId), 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function createStorageServer(context: StorageContext): http.Server {
  return http.createServer({ highWaterMark: STREAM_HIGH_WATER_MARK }, (req, res) => {
    const url = new URL(req.url ?? '/', 'http://storage');
    const batchId = OBJECT_PATH.exec(url.pathname)?.[1];
    const isUpload = batchId !== undefined && req.method === 'PUT';
    void serveRoute(context, 'storage', isUpload ? 'upload' : 'unknown', req, res, async (exchange) => {
      const { requestId } = exchange;
      if (batchId === undefined) return xmlError(404, 'NoSuchKey', 'The specified key does not exist.', requestId);
      const signatureRefusal = () =>
        xmlError(
          403,
          'SignatureDoesNotMatch',
          'The request signature we calculated does not match the signature you provided.',
          requestId,
        );
      // The method is signed, and a URL is signed for PUT alone: another method is a signature that does not
      // match, as S3 answers, whatever its framing.
      if (!isUpload) return signatureRefusal();
      const framing = framingRefusal(exchange);
      if (framing) return xmlRefusal(framing, requestId);
      if (!signatureMatches(context.store.signingSecret, url, batchId)) return signatureRefusal();
      const expires = Number(url.searchParams.get('expires'));
      if (expires < context.now() / 1000) {
        const details = {
          Expires: new Date(expires * 1000).toISOString(),
          ServerTime: new Date(context.now()).toISOString(),
        };
        return xmlRefusal({ status: 403, code: 'AccessDenied', message: 'Request has expired', details }, requestId);
      }
      const refusal =
        headerRefusal(exchange, batchId) ?? digestRefusal(exchange) ?? sizeRefusal(exchange, context.maxUploadBytes);
      if (refusal) return xmlRefusal(refusal, requestId);
      if (!context.store.batch(batchId))
        return xmlError(404, 'NoSuchUpload', `batch ${batchId} does not exist`, requestId);
      return answerUpload(exchange, context.store, batchId, {
        notAwaiting: (status) =>
          xmlError(409, 'InvalidObjectState', `batch ${batchId} is already ${status}`, requestId),
        incomplete: (bytes, expected) =>
          xmlError(400, 'IncompleteBody', `received ${bytes} bytes, Content-Length said ${expected}`, requestId),
        refused: (refusal) => xmlRefusal(refusal, requestId),
        stored: ({ sha256 }) => ({ status: 200, headers: { etag: `"${sha256}"` }, body: Buffer.alloc(0) }),
      });
    });
  });
}
