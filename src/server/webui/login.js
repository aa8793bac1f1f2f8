// The key form served (with status 401) in place of / and /dashboard when the server needs a key.
'use strict';
document.getElementById('login').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const k = document.getElementById('key').value.trim();
  if (!k) return;
  localStorage.setItem('kvscope_key', k);
  document.cookie = 'kvscope_key=' + encodeURIComponent(k) + '; path=/; SameSite=Strict';
  location.reload();
});
