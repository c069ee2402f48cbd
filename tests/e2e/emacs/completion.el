;;; completion.el --- eglot's own completion-at-point on moor's references  -*- lexical-binding: t -*-

;; Run by tests/e2e/test_emacs_completion.py as `emacs --batch -q -l completion.el' with
;; MOOR (the moor to start), MOOR_MEMORY (a memory whose `about:' lines are partial
;; references, one per entry of MOOR_TYPED, a JSON array) and MOOR_RESULTS. For each typed
;; reference: the cursor at its end, `completion-at-point' as TAB runs it, then the line
;; and the message Emacs showed ("No match", "Sole completion", …).

(require 'cl-lib)
(require 'json)
(require 'subr-x)
(package-activate-all)

;; docs/editors.md's set-up, with this checkout's moor.
(let* ((file (expand-file-name "moor-eglot.el" (file-name-directory load-file-name)))
       (placeholder "(expand-file-name \"~/project/.venv/bin/moor\")")
       (text (with-temp-buffer (insert-file-contents file) (buffer-string))))
  (with-temp-buffer
    (insert (string-replace placeholder (prin1-to-string (getenv "MOOR")) text))
    (eval-buffer nil nil file)))

(defvar moor-e2e-said nil)
(advice-add 'message :around
            (lambda (orig format &rest args)
              (when format (push (apply #'format-message format args) moor-e2e-said))
              (apply orig format args)))

(defun moor-e2e-wait (predicate)
  (let ((deadline (+ (float-time) 30)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (funcall predicate)))

(let ((results nil))
  (find-file (getenv "MOOR_MEMORY"))
  (run-hooks 'post-command-hook)        ; where `eglot-ensure' connects, as after a command
  (moor-e2e-wait (lambda () (bound-and-true-p eglot--managed-mode)))
  (dolist (typed (append (json-read-from-string (getenv "MOOR_TYPED")) nil))
    (goto-char (point-min))
    (search-forward (concat "- " typed "\n"))
    (backward-char)
    (setq moor-e2e-said nil)
    (let ((this-command 'completion-at-point))
      (condition-case err (completion-at-point)
        (error (push (error-message-string err) moor-e2e-said))))
    (push (list (cons "typed" typed)
                (cons "line" (buffer-substring-no-properties (line-beginning-position)
                                                             (line-end-position)))
                (cons "said" (vconcat (reverse moor-e2e-said))))
          results))
  (let ((coding-system-for-write 'utf-8-unix))
    (write-region (json-encode (vconcat (reverse results))) nil (getenv "MOOR_RESULTS")
                  nil 'silent))
  (ignore-errors (eglot-shutdown (eglot-current-server)))
  (kill-emacs 0))

;;; completion.el ends here
