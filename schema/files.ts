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

/** Raw (non-multipart) uploads name the file in the query. */
export const UploadQuery = z.object({ name: z.string().min(1).max(255).optional() });
