// The settings area's one script (decisions.md §18): a "Copy" button beside the new token.
// Without it (JavaScript off) the read-only field is still there to select and copy by hand.
for (const button of document.querySelectorAll('button[data-copy]')) {
  const field = document.getElementById(button.dataset.copy);
  const status = document.getElementById(button.dataset.status);
  if (!field) continue;
  button.hidden = false;
  button.addEventListener('click', async () => {
    let copied = false;
    try {
      await navigator.clipboard.writeText(field.value);
      copied = true;
    } catch {
      // No clipboard API (an insecure origin): select the text and copy the old way.
      field.select();
      copied = document.execCommand('copy');
    }
    if (status) status.textContent = copied ? 'Copied.' : 'Could not copy: select the token and copy it.';
  });
}
