// Text from a config file as bds shows it in a warning or an error, and the nearest known name to a misspelt
// one. A config file may hold the key anywhere (as a profile's name, in the wrong field), so nothing taken from
// it is shown whole.

/** A settings warning: what was found, and what to do about it. */
export interface SettingsWarning {
  message: string;
  hint: string;
}

/** Anything that looks like a key: a prefix and what follows it (a bare prefix reveals nothing). */
const KEY_SHAPED = /svc_(live|test)_[^\s"'`,;:]+/g;
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/g;
const SHOWN_MAX = 60;

/** Text with anything shaped like a key cut to its prefix (a path or a value a key was pasted into). */
export function withoutKeys(text: string): string {
  return text.replace(KEY_SHAPED, 'svc_$1_…');
}

/** One line, no control characters, no key, cut to a readable length. */
export function shownText(text: string): string {
  const clean = withoutKeys(text.replace(CONTROL_CHARACTER, ' '));
  const characters = [...clean];
  return characters.length > SHOWN_MAX ? `${characters.slice(0, SHOWN_MAX).join('')}…` : clean;
}

/** The known name nearest to `name` (case aside, a couple of typing slips), if any is near enough. */
export function closestName(name: string, known: readonly string[]): string | undefined {
  if (name.length > 40) return undefined;
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance <= Math.max(1, Math.floor(candidate.length / 4)) && (!best || distance < best.distance)) {
      best = { name: candidate, distance };
    }
  }
  return best?.name;
}

/** Levenshtein distance: insertions, deletions and substitutions. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
