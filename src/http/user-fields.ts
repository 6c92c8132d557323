// The wire shape of a user: GET /users answers it, and the mock API's user unit (src/routes/units.ts)
// has the fields of it that need nothing but the user's row.
import { type Static, Type } from 'typebox';
import type { UserRow } from '../store/schema.ts';
import { rfc3339 } from '../wire/datetime.ts';
import { dateTime } from './params.ts';

/** The wire shape of a user. */
export const userSchema = Type.Object({
  id: Type.String(),
  login: Type.String(),
  display_name: Type.String(),
  type: Type.String({ description: 'Always "": helixd keeps no staff, admin or global-moderator roles' }),
  broadcaster_type: Type.String(),
  description: Type.String(),
  profile_image_url: Type.String(),
  offline_image_url: Type.String(),
  view_count: Type.Integer({ description: 'Always 0: Helix no longer counts channel views' }),
  email: Type.Optional(
    Type.String({ description: "Only to the user's own token with user:read:email; absent otherwise" }),
  ),
  created_at: dateTime,
});
export type User = Static<typeof userSchema>;

/** The fields of a user that need nothing but its row: GET /users and the mock API's user unit. */
export const USER_OWN_FIELDS = [
  'id',
  'login',
  'display_name',
  'type',
  'broadcaster_type',
  'description',
  'created_at',
] as const;

export function userOwnFields(row: UserRow): Pick<User, (typeof USER_OWN_FIELDS)[number]> {
  return {
    id: String(row.id),
    login: row.login,
    display_name: row.display_name,
    // helixd keeps no staff, admin or global-moderator roles: every user is a normal user.
    type: '',
    broadcaster_type: row.broadcaster_type,
    description: row.description,
    created_at: rfc3339(row.created_at),
  };
}
