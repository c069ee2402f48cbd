;; moor with eglot (Emacs 28 with the eglot package, or Emacs 29 and newer), in init.el.
;; The command is the moor of the Python environment that has it installed, e.g. your
;; project's .venv/bin/moor. Memories are Markdown: markdown-mode (a package) opens them.
(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               `((markdown-mode gfm-mode)
                 . (,(expand-file-name "~/project/.venv/bin/moor") "lsp"))))
(add-hook 'markdown-mode-hook #'eglot-ensure)
;; Follow rewrites a memory's file, not its buffer: Emacs reloads an unmodified buffer
;; whose file changed on disk only with auto-revert-mode.
(add-hook 'markdown-mode-hook #'auto-revert-mode)
;; Once a moor command answers, a buffer whose text is its file's again (the reason line
;; moor removed, never saved) is marked as saved.
(defun moor-mark-saved-if-unchanged (&rest _)
  (dolist (buffer (buffer-list))
    (with-current-buffer buffer
      (let ((file buffer-file-name))
        (when (and file (buffer-modified-p) (derived-mode-p 'markdown-mode)
                   (file-readable-p file)
                   (string= (buffer-string)
                            (with-temp-buffer (insert-file-contents file) (buffer-string))))
          (set-buffer-modified-p nil))))))
(advice-add 'eglot-execute-command :after #'moor-mark-saved-if-unchanged)

(defun moor-reaffirm (reason)
  "Reaffirm the memory in this buffer: it still holds for the code as it is now."
  (interactive "sWhy does this memory still hold? ")
  (let ((result (eglot-execute-command (eglot-current-server) 'moor.reaffirm
                                       (vector (buffer-file-name) reason))))
    (message "moor: %s" (mapconcat #'identity (plist-get result :done) "; "))))
