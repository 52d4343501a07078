// scripts/executables.js, which signs the macOS binary ad hoc and finds the SEA blob in every binary: on a small
// Mach-O built here (CI checks the real binaries, and the reader against Apple's signature of Node).

import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

interface Signature {
  adHoc: boolean;
  identifier: string;
  hash: string;
  pages: number;
  codeLimit: number;
  valid: boolean;
}
const { adHocSign, machOSignature, seaBlobOf } = (await import(
  pathToFileURL(path.join(ROOT, 'scripts', 'executables.js')).href
)) as {
  adHocSign: (file: Buffer, identifier: string) => Buffer;
  machOSignature: (file: Buffer) => Signature | undefined;
  seaBlobOf: (file: Buffer) => Buffer;
};

const BLOB = Buffer.from('the SEA blob: main script and assets');

/** A 64-bit Mach-O executable: __TEXT (one section), NODE_SEA (the blob), __LINKEDIT ending the file; unsigned. */
function machO(): Buffer {
  const file = Buffer.alloc(0x3123);
  let at = 32;
  const segment = (name: string, fileoff: number, filesize: number, section?: [string, number, number]) => {
    const size = 72 + (section ? 80 : 0);
    file.writeUInt32LE(0x19, at); // LC_SEGMENT_64
    file.writeUInt32LE(size, at + 4);
    file.write(name, at + 8, 'latin1');
    file.writeBigUInt64LE(BigInt(fileoff), at + 24); // vmaddr
    file.writeBigUInt64LE(BigInt(Math.ceil(filesize / 0x1000) * 0x1000), at + 32);
    file.writeBigUInt64LE(BigInt(fileoff), at + 40);
    file.writeBigUInt64LE(BigInt(filesize), at + 48);
    if (section) {
      const [sectionName, offset, length] = section;
      file.writeUInt32LE(1, at + 64);
      file.write(sectionName, at + 72, 'latin1');
      file.write(name, at + 88, 'latin1');
      file.writeBigUInt64LE(BigInt(length), at + 112);
      file.writeUInt32LE(offset, at + 120);
    }
    at += size;
  };
  segment('__TEXT', 0, 0x2000, ['__text', 0x1000, 0x100]);
  segment('NODE_SEA', 0x2000, 0x1000, ['__NODE_SEA_BLOB', 0x2000, BLOB.length]);
  segment('__LINKEDIT', 0x3000, 0x123);
  file.writeUInt32LE(0xfeedfacf, 0);
  file.writeUInt32LE(0x01000007, 4); // x86_64
  file.writeUInt32LE(2, 12); // MH_EXECUTE
  file.writeUInt32LE(3, 16);
  file.writeUInt32LE(at - 32, 20);
  for (let i = 0x1000; i < 0x1100; i++) file[i] = (i * 7) & 0xff;
  BLOB.copy(file, 0x2000);
  return file;
}

describe('scripts/executables.js', () => {
  it('signs a Mach-O ad hoc: every page hashed, the same bytes each time, an old signature replaced', () => {
    const unsigned = machO();
    expect(machOSignature(unsigned)).toBeUndefined();
    const signed = adHocSign(unsigned, 'bds');
    expect(machOSignature(signed)).toEqual({
      adHoc: true,
      identifier: 'bds',
      hash: 'sha256',
      pages: 4, // 0x3130, the code up to the signature (16-byte aligned), in 4 kB pages
      codeLimit: 0x3130,
      valid: true,
    });
    expect(adHocSign(unsigned, 'bds').equals(signed)).toBe(true);
    expect(adHocSign(signed, 'bds').equals(signed)).toBe(true);
    expect(seaBlobOf(signed).equals(BLOB)).toBe(true);
  });

  it('finds a changed byte: its page hash no longer matches', () => {
    const signed = adHocSign(machO(), 'bds');
    signed[0x1010] ^= 1;
    expect(machOSignature(signed)?.valid).toBe(false);
  });
});
