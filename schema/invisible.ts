// Invisible characters in names (issue 50, low 9): the default-ignorable code points (zero-width space, joiner and
// non-joiner, word joiner, invisible operators, soft hyphen, Hangul fillers, tags, variation selectors, bidi marks, ...),
// which render as nothing, so "Admin" + U+200D shows as "Admin" and U+3164 alone as a blank name. A name may hold one
// only where it does a visible job: a joiner inside an emoji sequence (👨‍👩‍👧) or between letters of a script that
// writes with it (Persian's non-joiner, an Indic conjunct's joiner), a variation selector after the character it
// selects a form of (❤️, 1️⃣, an ideograph's variant), tag characters in an emoji flag (🏴󠁧󠁢󠁥󠁮󠁧󠁿). A name also needs
// one visible character. One pass over the code points, each looked at with its neighbours: linear in the input,
// and run only after the length check.

const IGNORABLE = /\p{Default_Ignorable_Code_Point}/u;
const PICTOGRAPH = /\p{Extended_Pictographic}/u;
/** What may stand before an emoji presentation selector (U+FE0E, U+FE0F): an emoji, digits, # and * included. */
const EMOJI = /\p{Emoji}/u;
const IDEOGRAPH = /\p{Ideographic}/u;
/** Letters and marks of the scripts that write with U+200C and U+200D between them. */
const JOINING =
  /[\p{scx=Arab}\p{scx=Syrc}\p{scx=Nkoo}\p{scx=Mand}\p{scx=Mong}\p{scx=Rohg}\p{scx=Adlm}\p{scx=Deva}\p{scx=Beng}\p{scx=Guru}\p{scx=Gujr}\p{scx=Orya}\p{scx=Taml}\p{scx=Telu}\p{scx=Knda}\p{scx=Mlym}\p{scx=Sinh}\p{scx=Mymr}\p{scx=Khmr}\p{scx=Tibt}]/u;
const LETTER_OR_MARK = /[\p{L}\p{M}]/u;
/** What shows nothing by itself, besides the ignorables: spaces, marks with no base, other format characters, the Braille blank. */
const BLANK = /[\p{White_Space}\p{M}\p{Cf}\u2800]/u;

const ZWNJ = 0x200c;
const ZWJ = 0x200d;
const BLACK_FLAG = 0x1f3f4;
const isTag = (c: number) => c >= 0xe0020 && c <= 0xe007f;
const isEmojiModifier = (c: number) => c >= 0x1f3fb && c <= 0x1f3ff;
const isPresentationSelector = (c: number) => c === 0xfe0e || c === 0xfe0f;
const isVariationSelector = (c: number) => (c >= 0xfe00 && c <= 0xfe0d) || (c >= 0xe0100 && c <= 0xe01ef);
const isMongolianSelector = (c: number) => (c >= 0x180b && c <= 0x180d) || c === 0x180f;
const ch = (c: number | undefined) => (c === undefined ? "" : String.fromCodePoint(c));

/** Whether the invisible `c` (between `prev` and `next`; `base` the last character before it that no selector, modifier or tag is) does a visible job. */
function allowed(c: number, prev: number | undefined, next: number | undefined, base: number | undefined): boolean {
  if (c === ZWJ && PICTOGRAPH.test(ch(base)) && PICTOGRAPH.test(ch(next))) return true;
  if (c === ZWJ || c === ZWNJ) {
    const p = ch(prev);
    const n = ch(next);
    return LETTER_OR_MARK.test(p) && LETTER_OR_MARK.test(n) && JOINING.test(p) && JOINING.test(n);
  }
  if (isPresentationSelector(c)) return prev !== undefined && !IGNORABLE.test(ch(prev)) && EMOJI.test(ch(prev));
  if (isVariationSelector(c)) return IDEOGRAPH.test(ch(prev));
  if (isMongolianSelector(c)) return /\p{scx=Mong}/u.test(ch(prev));
  if (isTag(c)) return base === BLACK_FLAG && (prev === BLACK_FLAG || (prev !== undefined && isTag(prev)));
  return false;
}

/** Why `name` is not fit to show (an invisible character that disguises it, or nothing visible at all); null when it is. */
export function invisibleProblem(name: string): string | null {
  let prev: number | undefined;
  let base: number | undefined;
  let visible = false;
  const codes = name[Symbol.iterator]();
  let cur = codes.next();
  while (!cur.done) {
    const c = cur.value.codePointAt(0)!;
    const after = codes.next();
    const next = after.done ? undefined : after.value.codePointAt(0);
    const s = cur.value;
    if (IGNORABLE.test(s)) {
      if (!allowed(c, prev, next, base))
        return "must not contain invisible characters (zero-width, filler or other default-ignorable ones) outside an emoji or a script that writes with them";
    } else if (!BLANK.test(s)) visible = true;
    if (!isPresentationSelector(c) && !isVariationSelector(c) && !isEmojiModifier(c) && !isTag(c)) base = c;
    prev = c;
    cur = after;
  }
  return visible ? null : "must contain a visible character";
}
