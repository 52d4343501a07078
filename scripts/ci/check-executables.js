#!/usr/bin/env node
// @ts-check
// bds-win-x64.exe and bds-darwin-x64, which CI cannot run, by their structure (.ci/steps/32-executables.sh):
//
//   node scripts/ci/check-executables.js RELEASE    RELEASE is the release/ folder
//
// The two Linux binaries carry the same SEA blob, which holds bds.cjs (the program); the Windows one is a PE32+
// x64 console program without node.exe's Authenticode signature (broken by the blob), the macOS one a Mach-O
// x86_64 executable with a NODE_SEA segment and a valid ad-hoc signature (every page hash checked), and both
// carry the Linux binaries' blob. Exits 1 on the first that does not hold.

import fs from 'node:fs';
import path from 'node:path';
import { formatOf, machOSegments, machOSignature, peHeaders, seaBlobOf } from '../executables.js';

const read = (/** @type {string} */ name) => fs.readFileSync(path.join(process.argv[2] ?? '', name));
const linux = seaBlobOf(read('bds-linux-x64'));
if (!linux || !seaBlobOf(read('bds-linux-arm64'))?.equals(linux)) {
  throw new Error('the two Linux binaries carry different SEA blobs');
}
// The blob: the main script, then the assets; bds.cjs, the program, is one of them.
if (!linux.includes(Buffer.from('globalThis.__bdsWorkerSource'))) throw new Error('no bds.cjs in the SEA blob');

const win = read('bds-win-x64.exe');
const pe = peHeaders(win);
if (formatOf(win) !== 'pe' || pe.machine !== 0x8664 || pe.subsystem !== 3) {
  throw new Error(`not a PE32+ x64 console program: machine ${pe.machine.toString(16)}, subsystem ${pe.subsystem}`);
}
if (pe.directories[4]?.size) throw new Error("bds-win-x64.exe keeps node.exe's broken Authenticode signature");
if (!seaBlobOf(win)?.equals(linux)) throw new Error("bds-win-x64.exe's SEA blob differs from the Linux binaries'");
const sections = pe.sections.map((s) => s.name).join(' ');
console.log(
  `ok: bds-win-x64.exe: PE32+ x64 console, ${pe.sections.length} sections (${sections}), resource RCDATA/NODE_SEA_BLOB of ${linux.length} bytes = the Linux binaries' blob, no signature`,
);

const mac = read('bds-darwin-x64');
const cpu = mac.readUInt32LE(4);
const type = mac.readUInt32LE(12);
if (formatOf(mac) !== 'macho' || cpu !== 0x01000007 || type !== 2) {
  throw new Error(`not a Mach-O x86_64 executable: cpu ${cpu.toString(16)}, type ${type}`);
}
const segments = machOSegments(mac).map((s) => s.name);
if (!segments.includes('NODE_SEA') || segments.at(-1) !== '__LINKEDIT') throw new Error(`segments ${segments}`);
if (!seaBlobOf(mac)?.equals(linux)) throw new Error("bds-darwin-x64's SEA blob differs from the Linux binaries'");
const signature = machOSignature(mac);
if (!signature?.adHoc || !signature.valid || signature.identifier !== 'bds') {
  throw new Error(`signature: ${JSON.stringify(signature)}`);
}
console.log(
  `ok: bds-darwin-x64: Mach-O x86_64 executable, segments ${segments.join(' ')}, section NODE_SEA,__NODE_SEA_BLOB = the Linux binaries' blob, signed ad hoc as ${signature.identifier}: ${signature.pages} SHA-256 page hashes, each matches`,
);
