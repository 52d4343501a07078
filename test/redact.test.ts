// What redactUrl hides in a URL bds prints: credentials in the user info, the values of query parameters named
// like secrets, and path segments that look like tokens; the API's own routes and ids stay readable.
import { describe, expect, it } from 'vitest';
import { redactUrl } from '../src/core/api/redact.js';

describe('redactUrl', () => {
  it.each([
    [
      'https://api.example.com/api/v1/batches?source_id=src_1',
      'https://api.example.com/api/v1/batches?source_id=src_1',
    ],
    [
      'https://api.example.com/api/v1/batches/bat_6625990b0513ec2d/complete',
      'https://api.example.com/api/v1/batches/bat_6625990b0513ec2d/complete',
    ],
    [
      'https://s3.example.com/bucket/uploads/2024-05/records-2024-05.jsonl.gz?X-Amz-Signature=abc',
      'https://s3.example.com/bucket/uploads/2024-05/records-2024-05.jsonl.gz?X-Amz-Signature=REDACTED',
    ],
    [
      'https://cdn.example.com/t/5bf66975-d4c7-4bf5-bcc8-b8d8a82ea278/records.jsonl.gz',
      'https://cdn.example.com/t/REDACTED/records.jsonl.gz',
    ],
    [
      'https://hooks.example.com/services/T0A1B2C3/B0D4E5F6/Xq7sPz2LmN8vRt4KjH6gYw3e',
      'https://hooks.example.com/services/T0A1B2C3/B0D4E5F6/REDACTED',
    ],
    ['https://ping.example.com/ping/fqOOd6-F4MMNuCEnzTU01w/nightly', 'https://ping.example.com/ping/REDACTED/nightly'],
    ['https://user:pass@proxy.example.com:3128/', 'https://REDACTED@proxy.example.com:3128/'],
  ])('%s', (url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });
});
