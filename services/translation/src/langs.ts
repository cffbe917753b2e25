import { franc } from "franc-min";

/** Languages of the translation endpoints (seed "Reading", docs/design/search-and-translation.md#machine-translation). */
export const LANGS = ["zh", "en", "ja", "ko", "es", "fr", "de", "pt", "ru", "ar"] as const;
/** One of `LANGS`. */
export type Lang = (typeof LANGS)[number];

/** True when `s` is one of `LANGS`. */
export function isLang(s: string): s is Lang {
  return (LANGS as readonly string[]).includes(s);
}

/** franc's ISO 639-3 codes → ours (Mandarin `cmn` is `zh`; Standard Arabic `arb` is `ar`). */
const FROM_639_3: Record<string, Lang> = {
  cmn: "zh",
  zho: "zh",
  eng: "en",
  jpn: "ja",
  kor: "ko",
  spa: "es",
  fra: "fr",
  deu: "de",
  por: "pt",
  rus: "ru",
  arb: "ar",
  ara: "ar",
};
/** Ours → ISO 639-3 (Apertium's pair names use these, e.g. `eng|spa`). */
export const TO_639_3: Record<Lang, string> = {
  zh: "zho",
  en: "eng",
  ja: "jpn",
  ko: "kor",
  es: "spa",
  fr: "fra",
  de: "deu",
  pt: "por",
  ru: "rus",
  ar: "ara",
};

/** Removes fenced/inline code, URLs and Markdown punctuation so only prose reaches the detector. */
function prose(text: string): string {
  return text
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?(^\1[^\n]*$|(?![\s\S]))/gm, " ")
    .replace(/`[^`\n]*`/g, " ")
    .replace(/\bhttps?:\/\/\S+/g, " ")
    .replace(/[#>*_|[\]()!-]+/g, " ");
}

/**
 * The language of `text` among `LANGS`, detected with franc-min (trigram model, 82 languages)
 * restricted to our ten; `fallback` (default `en`) when the text is too short or undecided.
 */
export function detectLang(text: string, fallback: Lang = "en"): Lang {
  const sample = prose(text).slice(0, 4_000);
  const code = franc(sample, { minLength: 10, only: Object.keys(FROM_639_3) });
  return FROM_639_3[code] ?? fallback;
}
