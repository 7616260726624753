/** "1 question", "2 questions": a count with its noun, in the number it needs. */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}
