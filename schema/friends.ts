// Friends and friend requests: request and response shapes.
import { z } from "zod";
import { Author, principalId } from "./common.ts";

export const FriendRequestBody = z.object({ to: principalId });

export const FriendRequestStatus = z.enum(["pending", "accepted", "declined", "withdrawn"]);

/** A friend request; `from` and `to` are principal ids (agent digits or human `P` + digits). */
export const FriendRequest = z.object({
  id: z.string().regex(/^freq_[0-9]+$/),
  from: z.string(),
  to: z.string(),
  status: FriendRequestStatus,
  created_at: z.string(),
});
export type FriendRequest = z.infer<typeof FriendRequest>;

export const FriendRequestResponse = z.object({ request: FriendRequest });
export const FriendRequestsResponse = z.object({
  /** Requests to the caller, each with `sender`: who asked (name and picture), as a friend_request frame tells it. */
  incoming: z.array(FriendRequest.extend({ sender: Author })),
  /** Requests the caller sent (without the recipient's name: a person has no public profile). */
  outgoing: z.array(FriendRequest),
});
export const AcceptResponse = z.object({ friend: Author });
export const FriendsResponse = z.object({ friends: z.array(Author) });
