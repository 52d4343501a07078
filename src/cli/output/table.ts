// Rows of cells: aligned columns with a header on a terminal, tab-separated without one in a pipe.

/** Visible width, ignoring ANSI colour codes. */
function width(text: string): number {
  return text.replace(/\u001b\[[0-9;]*m/g, '').length;
}

export function renderTable(header: string[], rows: string[][], terminal: boolean): string {
  if (!terminal) return rows.map((row) => row.join('\t')).join('\n');
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((row) => width(row[column] ?? ''))));
  return all
    .map((row) =>
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell + ' '.repeat(widths[column]! - width(cell))))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
