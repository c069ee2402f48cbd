;;; editor_files.el --- a real Emacs leaves its own files beside memories and code  -*- lexical-binding: t -*-

;; Run by tests/e2e/test_editor_files.py as `emacs --batch -q -l editor_files.el' with
;; MOOR (the moor to run), MOOR_ROOT (the workspace) and MOOR_RESULTS (the JSON to write).
;; What a person does: edits memories/other.md and saves it (Emacs keeps a backup) and
;; reaffirms it, edits src/app.py and saves it (a backup), then edits memories/note.md and
;; src/app.py without saving (Emacs locks both: `.#note.md', `.#app.py') and Emacs
;; auto-saves them (`#note.md#', `#app.py#'). Then it runs `moor check', as from M-!.

(require 'json)

;; Emacs keeps no backup of a file under /tmp (`normal-backup-enable-predicate'); the test's
;; workspace is there, a person's project is not.
(setq backup-enable-predicate (lambda (_name) t))

(defun moor-e2e-listing (folder)
  (vconcat (directory-files folder nil "\\`\\([^.]\\|\\.[^.]\\)")))

(defun moor-e2e-moor (&rest args)
  (with-temp-buffer
    (let* ((default-directory (file-name-as-directory (getenv "MOOR_ROOT")))
           (code (apply #'call-process (getenv "MOOR") nil t nil args)))
      (list (cons "code" code) (cons "output" (buffer-string))))))

(defun moor-e2e-edit (file text save)
  "Visit FILE, append TEXT (the first change locks it) and auto-save; SAVE it if asked."
  (find-file file)
  (auto-save-mode 1)                    ; as `find-file' turns it on outside batch mode
  (goto-char (point-max))
  (insert text)
  (do-auto-save t)
  (when save (save-buffer)))

(let* ((root (file-name-as-directory (getenv "MOOR_ROOT")))
       (default-directory root)
       (results nil))
  (moor-e2e-edit (expand-file-name "memories/other.md" root) "\nSaid once more.\n" t)
  (push (cons "reaffirm" (moor-e2e-moor "reaffirm" "memories/other.md" "--why" "said again"))
        results)
  (moor-e2e-edit (expand-file-name "src/app.py" root) "\n# a comment\n" t)
  (moor-e2e-edit (expand-file-name "src/app.py" root) "# not saved\n" nil)
  (moor-e2e-edit (expand-file-name "memories/note.md" root) "\nNot saved.\n" nil)
  (push (cons "memories" (moor-e2e-listing (expand-file-name "memories" root))) results)
  (push (cons "src" (moor-e2e-listing (expand-file-name "src" root))) results)
  (push (cons "check" (moor-e2e-moor "check")) results)
  (let ((coding-system-for-write 'utf-8-unix))
    (write-region (json-encode results) nil (getenv "MOOR_RESULTS") nil 'silent))
  (kill-emacs 0))

;;; editor_files.el ends here
