// @ts-check
// Changing one's own password: on request from the header, and required once when the first-start password is still in use.

import { api, put, session } from './api.js';
import { field, openDialog } from './dialogs.js';
import { toast } from './dom.js';
import { changed, state } from './store.js';

/**
 * Opens the dialog. The server ends every session of the user on a password change, so the dashboard signs in
 * again with the new password inside `renew` (which pauses the event stream and 401 handling meanwhile).
 * `required`: the dialog cannot be dismissed; its only other way out is `signOut`.
 */
export function changePasswordDialog({ required = false, renew, signOut }) {
  const me = state.me;
  // The password the appliance generated at first start was copied from a file, never chosen: the session that
  // signed in with it is proof enough (the API agrees), so it is not asked for again. A chosen one is.
  const generated = me.passwordChangeRequired === true;
  return openDialog({
    title: required ? 'Choose a new password' : 'Change your password',
    description: required
      ? `${me.username} still has the password created when the appliance first started. Choose your own before you continue.`
      : 'Your other sessions are signed out; this one continues with the new password. API keys keep working.',
    content: [
      generated
        ? null
        : field({
            name: 'currentPassword',
            label: 'Current password',
            type: 'password',
            required: true,
            maxlength: '256',
            autocomplete: 'current-password',
          }),
      field({
        name: 'newPassword',
        label: 'New password',
        type: 'password',
        required: true,
        minlength: '8',
        maxlength: '256',
        autocomplete: 'new-password',
        hint: 'At least 8 characters.',
      }),
      field({
        name: 'confirm',
        label: 'Repeat the new password',
        type: 'password',
        required: true,
        minlength: '8',
        maxlength: '256',
        autocomplete: 'new-password',
      }),
    ],
    submitLabel: required ? 'Save and continue' : 'Change password',
    cancelLabel: required ? 'Sign out' : 'Cancel',
    onCancel: required ? signOut : undefined,
    blocking: required,
    onSubmit: async (form) => {
      const { currentPassword, newPassword, confirm } = form.elements;
      if (newPassword.value !== confirm.value) throw new Error('The two new passwords differ.');
      if (currentPassword && newPassword.value === currentPassword.value)
        throw new Error('Choose a password different from the current one.');
      await renew(async () => {
        try {
          await put(
            `/api/users/${me.id}/password`,
            currentPassword
              ? { currentPassword: currentPassword.value, newPassword: newPassword.value }
              : { newPassword: newPassword.value },
          );
        } catch (err) {
          if (err.status === 403)
            throw new Error(currentPassword ? 'The current password is not right. Nothing was changed.' : err.message);
          throw err;
        }
        const result = await api(
          'POST',
          '/api/auth/login',
          { username: me.username, password: newPassword.value },
          { auth: false },
        );
        session.save(result.token, result.expiresAt);
        state.me = result.user;
        changed('me');
      });
      toast('Your password is changed.', 'success');
    },
  });
}
