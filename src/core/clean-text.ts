// Text that bds prints but did not write: a server's messages, names, ids and headers, and the names and values of
// a delivery folder's files, report and schema. One cleaner for all of it, so that none of it can drive the
// terminal (clear the screen, set the window title, fake a line) or a CI log (start a workflow command).

/**
 * Terminal escape sequences: CSI (colours, clear screen), OSC (window title, links; its text ends at any control
 * character, so that one left open never takes the lines after it along), and the short ones.
 */
const ESCAPE_SEQUENCE =
  /(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]|(?:\u001b\]|\u009d)[^\u0000-\u001f\u007f-\u009f]*(?:\u0007|\u001b\\|\u009c)?|\u001b[@-_]/g;
/** C0 (ESC, BEL, CR...), DEL and C1 (0x80-0x9F, which some terminals obey as ESC sequences). */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/g;
/** The same, but a line break and a tab stay: text of several lines that bds wrote itself. */
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
/** Long enough for any honest message or name, short enough to read. */
const CLEAN_TEXT_MAX = 300;

/**
 * The text as bds prints it: one line (white space runs become one space), without escape sequences or other
 * control characters (a server or a file must not clear the screen, set the window title or split a table's
 * row), and cut to `max` characters, ending in `…`.
 */
export function cleanText(text: string, max = CLEAN_TEXT_MAX): string {
  const clean = text.replace(/\s+/g, ' ').replace(ESCAPE_SEQUENCE, '').replace(CONTROL_CHARACTER, '').trim();
  const characters = [...clean];
  return characters.length > max ? `${characters.slice(0, max).join('')}…` : clean;
}

/**
 * Text of bds's own on its way to a terminal or a log (an error, a progress line), which may hold a server's or a
 * file's words: without escape sequences or control characters (a carriage return would let it write over its own
 * line), its line breaks and tabs kept, never cut.
 */
export function cleanLines(text: string): string {
  return text.replace(/\r\n/g, '\n').replace(ESCAPE_SEQUENCE, '').replace(CONTROL_BUT_LINES, '');
}

/**
 * JSON text for stdout: JSON.stringify escapes C0 control characters but writes DEL and C1 as they are, which a
 * terminal may obey; these are escaped too (`\u009b`), so that the document means the same and shows none.
 */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(
    /[\u007f-\u009f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
