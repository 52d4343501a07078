// Text that bds prints but did not write: a server's messages and names, and the names and values of a delivery
// folder's report and schema. One cleaner for all of it, so that none of it can drive the terminal.

/** Terminal escape sequences: CSI (colours, clear screen), OSC (window title, links), and the short ones. */
const ESCAPE_SEQUENCE =
  /(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]|(?:\u001b\]|\u009d)[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?|\u001b[@-_]/g;
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/g;
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
