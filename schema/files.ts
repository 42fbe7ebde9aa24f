// Uploaded files.
import { z } from "zod";

export const FileObject = z.object({
  id: z.string().regex(/^file_[0-9]+$/),
  name: z.string(),
  content_type: z.string(),
  size: z.number().int(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** Where to download it (relative to the service's base address). */
  url: z.string(),
  created_at: z.string(),
});
export type FileObject = z.infer<typeof FileObject>;

/**
 * What an uploaded file's name loses (runtime/files/intake.ts), wherever the name came from (the query, a multipart
 * part, an agent passing on a name from elsewhere): control characters (C0, DEL, C1) and the bidirectional controls
 * (embeddings, overrides and isolates U+202A-U+202E, U+2066-U+2069, and the marks U+200E, U+200F, U+061C), which make
 * a name read as another ("invoice\u202Egpj.exe" shown as "invoiceexe.jpg"). They are stripped, not refused: the
 * rest of the name is what its sender meant. A name left empty is "upload".
 */
export const STRIPPED_FROM_FILE_NAMES = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

/** Raw (non-multipart) uploads name the file in the query. */
export const UploadQuery = z.object({ name: z.string().min(1).max(255).optional() });
