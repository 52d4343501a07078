// How many columns of a terminal a text takes, for tables that hold text bds did not write (a schema's column
// names in Japanese, an emoji in a report): East Asian wide and fullwidth characters and emoji take two,
// combining marks and other zero-width characters none. A few lines of our own rather than string-width,
// which ora brings along: loading it and its first call cost about 150 ms, more than bds's whole start.

/** Unicode's East Asian Wide and Fullwidth blocks (Hangul, CJK, kana, Yi, fullwidth forms), as wcwidth has them. */
const WIDE =
  /[\u1100-\u115f\u231a\u231b\u2329\u232a\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe6f\uff00-\uff60\uffe0-\uffe6\u{1b000}-\u{1b2ff}\u{1f200}-\u{1f2ff}\u{20000}-\u{2fffd}\u{30000}-\u{3fffd}]/u;
/** Emoji shown as emoji by default: two columns. */
const EMOJI = /\p{Emoji_Presentation}/u;
const PICTOGRAPHIC = /\p{Extended_Pictographic}/u;
/** Nothing of their own on screen: combining marks, format characters (ZWJ), variation selectors, skin tones, Hangul vowels and finals. */
// eslint-disable-next-line no-misleading-character-class -- tested one code point at a time, never on a whole string
const ZERO_WIDTH = /[\p{Mn}\p{Me}\p{Cf}\u1160-\u11ff\ufe00-\ufe0f\u{1f3fb}-\u{1f3ff}\u{e0100}-\u{e01ef}]/u;
const REGIONAL_INDICATOR = /[\u{1f1e6}-\u{1f1ff}]/u;
const COLOUR_CODE = /\u001b\[[0-9;]*m/g;

/** The columns `text` takes on a terminal; colour codes take none. */
export function displayWidth(text: string): number {
  const plain = text.replace(COLOUR_CODE, '');
  if (/^[\x20-\x7e]*$/.test(plain)) return plain.length;
  let width = 0;
  let previous = '';
  let pendingFlag = false;
  for (const character of plain) {
    if (previous === '\u200d' && PICTOGRAPHIC.test(character)) {
      // The next part of an emoji ZWJ sequence (👩‍💻) is drawn into the first one.
    } else if (character === '\ufe0f' && PICTOGRAPHIC.test(previous) && !EMOJI.test(previous)) {
      // A text-style pictograph asked to show as an emoji (❤️) takes two columns.
      width += 1;
    } else if (character === '\u20e3') {
      // A keycap (1️⃣): the digit before it becomes a two-column emoji.
      width += 1;
    } else if (REGIONAL_INDICATOR.test(character)) {
      // Two regional indicators are one flag, two columns.
      width += pendingFlag ? 0 : 2;
      pendingFlag = !pendingFlag;
    } else if (!ZERO_WIDTH.test(character)) {
      width += WIDE.test(character) || EMOJI.test(character) ? 2 : 1;
    }
    if (!REGIONAL_INDICATOR.test(character)) pendingFlag = false;
    previous = character;
  }
  return width;
}

/** `text` followed by spaces up to `width` columns. */
export function padToWidth(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));
}
