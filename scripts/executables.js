// The three executable formats the standalone binaries come in, read and (for Mach-O) signed without tools that
// Debian 12 lacks: ELF (Linux), PE (Windows) and 64-bit Mach-O (macOS).
//
// - seaBlobOf: the SEA blob Node's --build-sea wrote into an executable (the main script and the assets), so
//   that CI can show that every binary of a release carries the same program: an ELF note NODE_SEA_BLOB, a PE
//   resource RCDATA/NODE_SEA_BLOB, a Mach-O section NODE_SEA,__NODE_SEA_BLOB.
// - adHocSign: a Mach-O ad-hoc code signature (arm64 Macs kill an unsigned binary; an x64 one runs unsigned but
//   macOS checks the pages of a signed one). Debian 12 has no `ldid` and `rcodesign` is not to be had here, so
//   this writes what Go's linker writes for every darwin binary (cmd/internal/codesign): a SuperBlob holding one
//   CodeDirectory of SHA-256 page hashes, flagged ad hoc, no certificate. The same input gives the same bytes.
// - machOSignature: that signature read back and every page hash checked against the file.

import { createHash } from 'node:crypto';

const PAGE_BITS = 12;
const PAGE = 1 << PAGE_BITS;
const MH_MAGIC_64 = 0xfeedfacf;
const LC_SEGMENT_64 = 0x19;
const LC_CODE_SIGNATURE = 0x1d;
const CSMAGIC_EMBEDDED_SIGNATURE = 0xfade0cc0;
const CSMAGIC_CODEDIRECTORY = 0xfade0c02;
const CS_ADHOC = 0x2;
const CS_LINKER_SIGNED = 0x20000;
const CS_HASHTYPE_SHA256 = 2;
const CS_EXECSEG_MAIN_BINARY = 0x1;
const SUPER_BLOB_SIZE = 12;
const BLOB_INDEX_SIZE = 8;
const CODE_DIRECTORY_SIZE = 88; // version 0x20400, up to execSegFlags

/** Which format `buffer` is: 'elf', 'pe', 'macho' (64-bit, little-endian), or undefined. */
export function formatOf(buffer) {
  if (buffer.length >= 4 && buffer.readUInt32BE(0) === 0x7f454c46) return 'elf';
  if (buffer.length >= 64 && buffer.toString('latin1', 0, 2) === 'MZ') return 'pe';
  if (buffer.length >= 32 && buffer.readUInt32LE(0) === MH_MAGIC_64) return 'macho';
  return undefined;
}

/** The SEA blob in an executable of any of the three formats; throws when there is none. */
export function seaBlobOf(buffer) {
  const format = formatOf(buffer);
  const blob =
    format === 'elf'
      ? elfNote(buffer, 'NODE_SEA_BLOB')
      : format === 'pe'
        ? peResource(buffer, 10, 'NODE_SEA_BLOB') // 10: RT_RCDATA
        : format === 'macho'
          ? machOSection(buffer, 'NODE_SEA', '__NODE_SEA_BLOB')
          : undefined;
  if (!blob) throw new Error(`no SEA blob in this ${format ?? 'unknown'} executable`);
  return blob;
}

/** The descriptor of the first ELF note named `name` in a PT_NOTE segment of a 64-bit little-endian ELF. */
function elfNote(buffer, name) {
  const phoff = Number(buffer.readBigUInt64LE(0x20));
  const phentsize = buffer.readUInt16LE(0x36);
  const phnum = buffer.readUInt16LE(0x38);
  for (let i = 0; i < phnum; i++) {
    const header = phoff + i * phentsize;
    if (buffer.readUInt32LE(header) !== 4) continue; // PT_NOTE
    const start = Number(buffer.readBigUInt64LE(header + 8));
    const end = start + Number(buffer.readBigUInt64LE(header + 32));
    for (let at = start; at + 12 <= end;) {
      const namesz = buffer.readUInt32LE(at);
      const descsz = buffer.readUInt32LE(at + 4);
      const nameStart = at + 12;
      const descStart = nameStart + align(namesz, 4);
      if (buffer.toString('latin1', nameStart, nameStart + namesz).replace(/\0$/, '') === name)
        return buffer.subarray(descStart, descStart + descsz);
      at = descStart + align(descsz, 4);
    }
  }
  return undefined;
}

/** The PE's headers: its sections (name, RVA, size, file offset) and data directories. */
export function peHeaders(buffer) {
  const pe = buffer.readUInt32LE(0x3c);
  if (buffer.toString('latin1', pe, pe + 4) !== 'PE\0\0') throw new Error('no PE signature');
  const machine = buffer.readUInt16LE(pe + 4);
  const sectionCount = buffer.readUInt16LE(pe + 6);
  const optionalSize = buffer.readUInt16LE(pe + 20);
  const optional = pe + 24;
  const magic = buffer.readUInt16LE(optional);
  if (magic !== 0x20b) throw new Error(`not PE32+ (optional header magic ${magic.toString(16)})`);
  const subsystem = buffer.readUInt16LE(optional + 68);
  const directoryCount = buffer.readUInt32LE(optional + 108);
  const directories = [];
  for (let i = 0; i < directoryCount; i++)
    directories.push({
      rva: buffer.readUInt32LE(optional + 112 + i * 8),
      size: buffer.readUInt32LE(optional + 116 + i * 8),
    });
  const sections = [];
  for (let i = 0; i < sectionCount; i++) {
    const at = optional + optionalSize + i * 40;
    sections.push({
      name: buffer.toString('latin1', at, at + 8).replace(/\0+$/, ''),
      virtualSize: buffer.readUInt32LE(at + 8),
      rva: buffer.readUInt32LE(at + 12),
      rawSize: buffer.readUInt32LE(at + 16),
      rawOffset: buffer.readUInt32LE(at + 20),
    });
  }
  return { machine, subsystem, directories, sections };
}

/** The data of the PE resource of a type (a number) and a name, in its first language. */
function peResource(buffer, type, name) {
  const { directories, sections } = peHeaders(buffer);
  const resources = directories[2]; // IMAGE_DIRECTORY_ENTRY_RESOURCE
  if (!resources?.rva) return undefined;
  const fileOffset = (rva) => {
    const section = sections.find((s) => rva >= s.rva && rva < s.rva + Math.max(s.virtualSize, s.rawSize));
    if (!section) throw new Error(`RVA ${rva.toString(16)} is in no section`);
    return rva - section.rva + section.rawOffset;
  };
  const root = fileOffset(resources.rva);
  // A resource directory's entries: named ones first, then numbered; each points at a subdirectory (high bit) or data.
  const entries = (dir) => {
    const count = buffer.readUInt16LE(dir + 12) + buffer.readUInt16LE(dir + 14);
    return Array.from({ length: count }, (_, i) => {
      const id = buffer.readUInt32LE(dir + 16 + i * 8);
      const target = buffer.readUInt32LE(dir + 20 + i * 8);
      let key = id;
      if (id & 0x80000000) {
        const at = root + (id & 0x7fffffff);
        key = buffer.toString('utf16le', at + 2, at + 2 + buffer.readUInt16LE(at) * 2);
      }
      return { key, offset: root + (target & 0x7fffffff), isDirectory: Boolean(target & 0x80000000) };
    });
  };
  const typeEntry = entries(root).find((e) => e.key === type && e.isDirectory);
  const nameEntry = typeEntry && entries(typeEntry.offset).find((e) => e.key === name && e.isDirectory);
  const language = nameEntry && entries(nameEntry.offset)[0];
  if (!language || language.isDirectory) return undefined;
  const start = fileOffset(buffer.readUInt32LE(language.offset));
  return buffer.subarray(start, start + buffer.readUInt32LE(language.offset + 4));
}

/** A 64-bit Mach-O's load commands: cmd, its offset in the file, and its size. */
function loadCommands(buffer) {
  if (formatOf(buffer) !== 'macho') throw new Error('not a 64-bit Mach-O');
  const count = buffer.readUInt32LE(16);
  const commands = [];
  for (let i = 0, at = 32; i < count; i++) {
    commands.push({ cmd: buffer.readUInt32LE(at), at, size: buffer.readUInt32LE(at + 4) });
    at += buffer.readUInt32LE(at + 4);
  }
  return commands;
}

/** The 64-bit segments of a Mach-O: name, file offset and size, where their load command is. */
export function machOSegments(buffer) {
  return loadCommands(buffer)
    .filter((c) => c.cmd === LC_SEGMENT_64)
    .map(({ at }) => ({
      at,
      name: buffer.toString('latin1', at + 8, at + 24).replace(/\0+$/, ''),
      vmsize: buffer.readBigUInt64LE(at + 32),
      fileoff: Number(buffer.readBigUInt64LE(at + 40)),
      filesize: Number(buffer.readBigUInt64LE(at + 48)),
      sections: buffer.readUInt32LE(at + 64),
    }));
}

function machOSection(buffer, segmentName, sectionName) {
  for (const segment of machOSegments(buffer)) {
    if (segment.name !== segmentName) continue;
    for (let i = 0; i < segment.sections; i++) {
      const at = segment.at + 72 + i * 80;
      if (buffer.toString('latin1', at, at + 16).replace(/\0+$/, '') !== sectionName) continue;
      const size = Number(buffer.readBigUInt64LE(at + 40));
      const offset = buffer.readUInt32LE(at + 48);
      return buffer.subarray(offset, offset + size);
    }
  }
  return undefined;
}

/**
 * `buffer`, a 64-bit Mach-O executable with room for an LC_CODE_SIGNATURE command, ad-hoc signed as `identifier`:
 * an existing signature is replaced. The signature goes at the end of __LINKEDIT, which must end the file.
 */
export function adHocSign(buffer, identifier) {
  const commands = loadCommands(buffer);
  const segments = machOSegments(buffer);
  const linkedit = segments.find((s) => s.name === '__LINKEDIT');
  const text = segments.find((s) => s.name === '__TEXT');
  if (!linkedit || !text) throw new Error('no __LINKEDIT or __TEXT segment');
  let signature = commands.find((c) => c.cmd === LC_CODE_SIGNATURE);
  // Without the old signature: the file ends where it started (or where __LINKEDIT's other data ends).
  const unsignedEnd = signature ? buffer.readUInt32LE(signature.at + 8) : linkedit.fileoff + linkedit.filesize;
  if (linkedit.fileoff + linkedit.filesize < unsignedEnd || unsignedEnd > buffer.length)
    throw new Error('__LINKEDIT does not end the file');
  const codeLimit = align(unsignedEnd, 16);
  const header = Buffer.alloc(codeLimit); // zeros pad the code to the signature's 16-byte boundary
  buffer.copy(header, 0, 0, unsignedEnd);
  if (!signature) {
    // A new load command, in the room left after the others (before the first section's data).
    const sizeOfCommands = header.readUInt32LE(20);
    const end = 32 + sizeOfCommands;
    const firstData = text.fileoff + firstSectionOffset(header, text);
    if (end + 16 > firstData || header.subarray(end, end + 16).some((byte) => byte !== 0))
      throw new Error('no room for a code signature load command');
    header.writeUInt32LE(LC_CODE_SIGNATURE, end);
    header.writeUInt32LE(16, end + 4);
    header.writeUInt32LE(header.readUInt32LE(16) + 1, 16);
    header.writeUInt32LE(sizeOfCommands + 16, 20);
    signature = { cmd: LC_CODE_SIGNATURE, at: end, size: 16 };
  }
  const pages = Math.ceil(codeLimit / PAGE);
  const identOffset = CODE_DIRECTORY_SIZE;
  const hashOffset = identOffset + Buffer.byteLength(identifier) + 1;
  const directoryLength = hashOffset + pages * 32;
  const size = SUPER_BLOB_SIZE + BLOB_INDEX_SIZE + directoryLength;

  // The load commands first: the pages hashed include them.
  header.writeUInt32LE(codeLimit, signature.at + 8);
  header.writeUInt32LE(size, signature.at + 12);
  const linkeditSize = codeLimit + size - linkedit.fileoff;
  header.writeBigUInt64LE(BigInt(linkeditSize), linkedit.at + 48);
  const vmsize = BigInt(align(linkeditSize, 0x4000)); // a whole page on arm64 (16 kB) and on x64 (4 kB)
  if (vmsize > linkedit.vmsize) header.writeBigUInt64LE(vmsize, linkedit.at + 32);

  const blob = Buffer.alloc(size);
  blob.writeUInt32BE(CSMAGIC_EMBEDDED_SIGNATURE, 0);
  blob.writeUInt32BE(size, 4);
  blob.writeUInt32BE(1, 8); // one blob: the CodeDirectory, slot 0
  blob.writeUInt32BE(0, 12);
  blob.writeUInt32BE(SUPER_BLOB_SIZE + BLOB_INDEX_SIZE, 16);
  const cd = blob.subarray(SUPER_BLOB_SIZE + BLOB_INDEX_SIZE);
  cd.writeUInt32BE(CSMAGIC_CODEDIRECTORY, 0);
  cd.writeUInt32BE(directoryLength, 4);
  cd.writeUInt32BE(0x20400, 8); // version: with the executable segment fields
  cd.writeUInt32BE(CS_ADHOC | CS_LINKER_SIGNED, 12); // as Go's linker flags it: ad hoc, replaceable by codesign
  cd.writeUInt32BE(hashOffset, 16);
  cd.writeUInt32BE(identOffset, 20);
  cd.writeUInt32BE(0, 24); // no special slots
  cd.writeUInt32BE(pages, 28);
  cd.writeUInt32BE(codeLimit, 32);
  cd.writeUInt8(32, 36); // hash size
  cd.writeUInt8(CS_HASHTYPE_SHA256, 37);
  cd.writeUInt8(PAGE_BITS, 39);
  cd.writeBigUInt64BE(BigInt(text.fileoff), 64); // execSegBase
  cd.writeBigUInt64BE(BigInt(text.filesize), 72); // execSegLimit
  cd.writeBigUInt64BE(BigInt(CS_EXECSEG_MAIN_BINARY), 80);
  cd.write(`${identifier}\0`, identOffset, 'utf8');
  for (let page = 0; page < pages; page++) {
    const data = header.subarray(page * PAGE, Math.min((page + 1) * PAGE, codeLimit));
    createHash('sha256')
      .update(data)
      .digest()
      .copy(cd, hashOffset + page * 32);
  }
  return Buffer.concat([header, blob]);
}

/** The file offset of a segment's first section, relative to the segment (its size when it has none). */
function firstSectionOffset(buffer, segment) {
  if (!segment.sections) return segment.filesize;
  return buffer.readUInt32LE(segment.at + 72 + 48) - segment.fileoff;
}

/**
 * A Mach-O's code signature, read and checked: undefined when it has none; else its flags, identifier, page
 * count, and `valid`: every page hash matches the file up to the code limit, which is where the signature starts.
 */
export function machOSignature(buffer) {
  const command = loadCommands(buffer).find((c) => c.cmd === LC_CODE_SIGNATURE);
  if (!command) return undefined;
  const offset = buffer.readUInt32LE(command.at + 8);
  const blob = buffer.subarray(offset, offset + buffer.readUInt32LE(command.at + 12));
  if (blob.readUInt32BE(0) !== CSMAGIC_EMBEDDED_SIGNATURE) throw new Error('the signature is no SuperBlob');
  const count = blob.readUInt32BE(8);
  let directory;
  for (let i = 0; i < count && !directory; i++) {
    const slotOffset = blob.readUInt32BE(SUPER_BLOB_SIZE + i * 8 + 4);
    if (blob.readUInt32BE(SUPER_BLOB_SIZE + i * 8) === 0) directory = blob.subarray(slotOffset);
  }
  if (!directory || directory.readUInt32BE(0) !== CSMAGIC_CODEDIRECTORY) throw new Error('no CodeDirectory');
  const flags = directory.readUInt32BE(12);
  const hashOffset = directory.readUInt32BE(16);
  const identOffset = directory.readUInt32BE(20);
  const pages = directory.readUInt32BE(28);
  const codeLimit = directory.readUInt32BE(32);
  const hashSize = directory.readUInt8(36);
  const hashType = directory.readUInt8(37);
  const pageSize = 1 << directory.readUInt8(39);
  const identifier = directory.toString('utf8', identOffset, directory.indexOf(0, identOffset));
  const algorithm = { 1: 'sha1', 2: 'sha256' }[hashType]; // Apple's signatures carry SHA-1 in slot 0
  let valid = algorithm !== undefined && codeLimit === offset;
  for (let page = 0; valid && page < pages; page++) {
    const data = buffer.subarray(page * pageSize, Math.min((page + 1) * pageSize, codeLimit));
    const want = directory.subarray(hashOffset + page * hashSize, hashOffset + (page + 1) * hashSize);
    valid = createHash(algorithm).update(data).digest().equals(want);
  }
  valid &&= pages === Math.ceil(codeLimit / pageSize) && offset + blob.length === buffer.length;
  return { adHoc: Boolean(flags & CS_ADHOC), identifier, hash: algorithm, pages, codeLimit, valid };
}

function align(value, to) {
  return Math.ceil(value / to) * to;
}
