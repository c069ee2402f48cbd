;;; driver.el --- drives a real Emacs + eglot through the moor end-to-end scenario  -*- lexical-binding: t -*-

;; Run as `emacs --batch -q -l tests/e2e/emacs/driver.el' with MOOR_E2E_SCENARIO (the JSON
;; written by tests/e2e/editor_scenario.py). Loads docs/editors.md's set-up (moor-eglot.el beside
;; this file, with only its moor path replaced), goes through the scenario and writes what
;; Emacs shows to the results file. Every wait polls with a deadline
;; (`accept-process-output'), never sleeps.
;;
;; Batch mode has no command loop and no redisplay, so the driver does their part, as
;; Emacs does for a person: it runs `post-command-hook' after each command (where
;; `eglot-ensure' connects), starts Flymake once in a buffer when it looks at it (Flymake
;; starts on display), and answers the prompts: the first choice of a server's question
;; (`completing-read'), yes to "Server wants to edit" (`y-or-n-p'), the chosen code action.

(require 'cl-lib)
(require 'json)
(require 'subr-x)

(package-activate-all)                  ; as an interactive start does: the packages' autoloads

;; Batch mode has no command loop to deliver file notifications, so the set-up's
;; auto-revert-mode polls, as Emacs does where notifications are unavailable (every 0.5 s,
;; not its 5 s, to keep the run short).
(setq auto-revert-use-notify nil
      auto-revert-interval 0.5)

(defvar moor-e2e-spec
  (let ((json-object-type 'hash-table) (json-array-type 'list) (json-key-type 'string))
    (json-read-file (getenv "MOOR_E2E_SCENARIO"))))
(defvar moor-e2e-results (make-hash-table :test 'equal))
(defvar moor-e2e-started (float-time))
(defvar moor-e2e-action nil "The title of the code action to pick next.")
(defvar moor-e2e-pick nil "The title answering the server's next question (nil: the first).")

(defun moor-e2e-spec (key) (gethash key moor-e2e-spec))
(defun moor-e2e-memory (name) (gethash name (moor-e2e-spec "memories")))
(defun moor-e2e-put (key value) (puthash key value moor-e2e-results))
(defun moor-e2e-elapsed () (- (float-time) moor-e2e-started))

(define-error 'moor-e2e-failure "moor e2e failure")

(defun moor-e2e-wait (what predicate)
  "Wait until PREDICATE is non-nil; fail with WHAT at the scenario's deadline."
  (let ((deadline (+ (float-time) (moor-e2e-spec "timeout"))))
    (while (not (funcall predicate))
      (when (> (float-time) deadline)
        (signal 'moor-e2e-failure
                (list (format "timed out after %s s waiting for %s"
                              (moor-e2e-spec "timeout") what))))
      (accept-process-output nil 0.02))))

;; docs/editors.md's set-up, with this checkout's moor.
(let* ((file (expand-file-name "moor-eglot.el" (file-name-directory load-file-name)))
       (placeholder "(expand-file-name \"~/project/.venv/bin/moor\")")
       (text (with-temp-buffer (insert-file-contents file) (buffer-string))))
  (unless (string-search placeholder text)
    (error "the set-up names no moor to replace"))
  (with-temp-buffer
    (insert (string-replace placeholder (prin1-to-string (moor-e2e-spec "moor")) text))
    (eval-buffer nil nil file)))

;; The person's part.
;; eglot's request timeout as it ships is 10 s; the run shortens it, and a person answers
;; a server's question only once it has passed, as one who reads it does.
(setq jsonrpc-default-request-timeout 3)

(defun moor-e2e-completing-read (prompt collection &rest _)
  (let ((titles (mapcar (lambda (item) (if (consp item) (car item) item)) collection)))
    (cond
     ((string-prefix-p "[eglot] Pick an action" prompt) moor-e2e-action)
     (t (let ((question (make-hash-table :test 'equal)))
          (puthash "message" prompt question)
          (puthash "titles" (vconcat titles) question)
          (moor-e2e-put "questions"
                        (vconcat (gethash "questions" moor-e2e-results) (list question))))
        (let ((answered (+ (float-time) jsonrpc-default-request-timeout 1)))
          (while (< (float-time) answered) (accept-process-output nil 0.05)))
        (if (member moor-e2e-pick titles) moor-e2e-pick (car titles))))))
(advice-add 'completing-read :override #'moor-e2e-completing-read)
(advice-add 'y-or-n-p :override (lambda (&rest _) t))

(defun moor-e2e-command (function &rest args)
  "Run FUNCTION as a command: then `post-command-hook', as the command loop would."
  (let ((this-command function))
    (prog1 (apply function args)
      (run-hooks 'post-command-hook))))

(defun moor-e2e-buffer (name)
  (find-buffer-visiting (moor-e2e-memory name)))

(defun moor-e2e-look (buffer)
  "Look at BUFFER: once eglot manages it, Flymake starts there (it starts on display)."
  (with-current-buffer buffer
    (when (and (bound-and-true-p eglot--managed-mode) flymake-mode
               (not (local-variable-p 'moor-e2e-looked)))
      (setq-local moor-e2e-looked t)
      (flymake-start))))

(defun moor-e2e-position (pos)
  (save-excursion
    (goto-char pos)
    (cons (1- (line-number-at-pos pos t)) (- pos (line-beginning-position)))))

(defun moor-e2e-flymake (name)
  "moor's diagnostics as Flymake holds them in NAME's buffer, or nil without a buffer."
  (when-let ((buffer (moor-e2e-buffer name)))
    (moor-e2e-look buffer)
    (with-current-buffer buffer
      (cl-loop for d in (flymake-diagnostics)
               for lsp = (alist-get 'eglot-lsp-diag (flymake-diagnostic-data d))
               when (equal (plist-get lsp :source) "moor")
               collect d))))

(defun moor-e2e-shown (name)
  "NAME's diagnostics as a JSON array (0-based lines, character columns), or nil."
  (when-let ((buffer (moor-e2e-buffer name)))
    (with-current-buffer buffer
      (vconcat
       (sort
        (cl-loop for d in (moor-e2e-flymake name)
                 for lsp = (alist-get 'eglot-lsp-diag (flymake-diagnostic-data d))
                 for start = (moor-e2e-position (flymake-diagnostic-beg d))
                 for end = (moor-e2e-position (flymake-diagnostic-end d))
                 collect (let ((item (make-hash-table :test 'equal)))
                           (puthash "code" (plist-get lsp :code) item)
                           (puthash "message" (plist-get lsp :message) item)
                           (puthash "line" (car start) item)
                           (puthash "col" (cdr start) item)
                           (puthash "end_line" (car end) item)
                           (puthash "end_col" (cdr end) item)
                           item))
        (lambda (a b) (< (+ (* 1000 (gethash "line" a)) (gethash "col" a))
                         (+ (* 1000 (gethash "line" b)) (gethash "col" b)))))))))

(defun moor-e2e-has (name code)
  (cl-some (lambda (d) (equal (gethash "code" d) code)) (moor-e2e-shown name)))

(defun moor-e2e-none (name)
  (let ((shown (moor-e2e-shown name)))
    (and shown (= (length shown) 0))))

(defun moor-e2e-record (step names)
  (puthash step (moor-e2e-elapsed) (or (gethash "steps" moor-e2e-results)
                                       (moor-e2e-put "steps" (make-hash-table :test 'equal))))
  (let ((seen (make-hash-table :test 'equal)))
    (dolist (name names) (puthash name (moor-e2e-shown name) seen))
    (moor-e2e-put step seen)))

(defun moor-e2e-open (name)
  (moor-e2e-command #'find-file (moor-e2e-memory name))
  (let ((buffer (current-buffer)))
    (moor-e2e-wait (format "eglot to manage %s" name)
                   (lambda () (buffer-local-value 'eglot--managed-mode buffer)))))

(defun moor-e2e-error (err)
  "A JSON object for a signalled error: the JSON-RPC code and message when it is one."
  (let ((item (make-hash-table :test 'equal))
        (data (cdr err)))
    (puthash "code" (or (and (listp data) (alist-get 'jsonrpc-error-code data)) "signal") item)
    (puthash "message" (or (and (listp data) (alist-get 'jsonrpc-error-message data))
                           (error-message-string err))
             item)
    item))

(defun moor-e2e-code-actions (name)
  "The code actions offered on each of NAME's moor diagnostics: (TITLE COMMAND BEG END)."
  (with-current-buffer (moor-e2e-buffer name)
    (cl-loop for d in (moor-e2e-flymake name)
             for beg = (flymake-diagnostic-beg d)
             for end = (flymake-diagnostic-end d)
             append (cl-loop for action in (eglot-code-actions beg end nil nil)
                             for command = (plist-get action :command)
                             when command ; an edit only (the reason line) is run apart
                             collect (list (plist-get action :title)
                                           (if (stringp command) command
                                             (plist-get command :command))
                                           beg end)))))

(defun moor-e2e-run-action (name title command beg end)
  "Pick TITLE in `eglot-code-actions' on BEG..END of NAME, as a person would."
  (let ((entry (make-hash-table :test 'equal)))
    (puthash "memory" name entry)
    (puthash "title" title entry)
    (puthash "command" command entry)
    (with-current-buffer (moor-e2e-buffer name)
      (let ((moor-e2e-action title)
            (last-nonmenu-event ?\r))   ; chosen with the keyboard, not a mouse menu
        (condition-case err
            (puthash "result" (moor-e2e-command #'eglot-code-actions beg end nil t) entry)
          (error (puthash "error" (moor-e2e-error err) entry)))))
    (moor-e2e-put "actions" (vconcat (gethash "actions" moor-e2e-results) (list entry)))
    entry))

(defun moor-e2e-line-start (name line)
  "The position where LINE (0-based) of NAME's buffer starts."
  (with-current-buffer (moor-e2e-buffer name)
    (save-excursion (goto-char (point-min)) (forward-line line) (point))))

(defun moor-e2e-offered (name line title)
  "The code action TITLE on LINE of NAME, once the server offers it: (TITLE COMMAND BEG END)."
  (let ((pos (moor-e2e-line-start name line))
        (found nil))
    (moor-e2e-wait (format "the code action %s on line %s of %s" title line name)
                   (lambda ()
                     (with-current-buffer (moor-e2e-buffer name)
                       (setq found (cl-find title (eglot-code-actions pos pos nil nil)
                                            :key (lambda (a) (plist-get a :title))
                                            :test #'equal)))))
    (let ((command (plist-get found :command)))
      (list title (if (stringp command) command (plist-get command :command)) pos pos))))

(defun moor-e2e-text (name)
  (with-current-buffer (moor-e2e-buffer name)
    (buffer-substring-no-properties (point-min) (point-max))))

(defun moor-e2e-reason-line (name)
  "The 0-based line where the server put a reason line in NAME's buffer, or nil."
  (with-current-buffer (moor-e2e-buffer name)
    (save-excursion
      (goto-char (point-min))
      (when (re-search-forward "^<!-- moor " nil t)
        (1- (line-number-at-pos (point) t))))))

(defun moor-e2e-json-bool (value) (if value t :json-false))

(defun moor-e2e-forget ()
  "Forget wrong.md through its code action, the reason written in the buffer: answered
Cancel first (nothing changes), then \"Write my own reason…\"."
  (moor-e2e-open "wrong")
  (let* ((spec (moor-e2e-spec "forget"))
         (forget (make-hash-table :test 'equal))
         (action (moor-e2e-offered "wrong" 0 (gethash "title" spec))))
    (moor-e2e-put "forget" forget)
    (puthash "offered" (car action) forget)
    (puthash "before" (moor-e2e-text "wrong") forget)
    ;; eglot is not asked: the action is an edit putting the reason line in the buffer.
    (puthash "asked" (gethash "result" (apply #'moor-e2e-run-action "wrong" action)) forget)
    (puthash "kept" (moor-e2e-json-bool (file-exists-p (moor-e2e-memory "wrong"))) forget)
    (moor-e2e-wait "the reason line in wrong.md" (lambda () (moor-e2e-reason-line "wrong")))
    (let ((line (moor-e2e-reason-line "wrong")))
      (with-current-buffer (moor-e2e-buffer "wrong")
        (goto-char (moor-e2e-line-start "wrong" line))
        (puthash "line" (buffer-substring-no-properties (point) (line-end-position)) forget)
        ;; The person writes the reason after "because:" (the buffer is not saved).
        (search-forward "because:" (line-end-position))
        (delete-horizontal-space)
        (insert " " (gethash "reason" spec) " "))
      (let ((done (apply #'moor-e2e-run-action "wrong"
                         (moor-e2e-offered "wrong" line (gethash "written" spec)))))
        (puthash "done" (gethash "result" done) forget)
        (puthash "error" (gethash "error" done) forget)))
    (moor-e2e-wait "the reason line to leave wrong.md's buffer"
                   (lambda () (not (moor-e2e-reason-line "wrong"))))
    (puthash "after" (moor-e2e-text "wrong") forget)
    (puthash "exists" (moor-e2e-json-bool (file-exists-p (moor-e2e-memory "wrong"))) forget)))

;; What the server offers eglot (no `window.showMessage'): an edit putting the reason line in.
(defconst moor-e2e-reaffirm-own "Reaffirm with my own reason (a line to write it on)…")

(defun moor-e2e-reaffirm-by-reason-line ()
  "Reaffirm external.md (drifted again) with the reason written on its reason line, and
record whether its buffer is left as saved: the line gone, unmodified, the file's text."
  (let ((spec (moor-e2e-spec "reaffirm_own"))
        (reasoned (make-hash-table :test 'equal)))
    (moor-e2e-put "reasoned" reasoned)
    (let ((coding-system-for-write 'utf-8-unix))
      (write-region (gethash "app" spec) nil (moor-e2e-spec "app") nil 'silent))
    (moor-e2e-wait "external.md's drifted diagnostic after src/app.py was rewritten again"
                   (lambda () (moor-e2e-has "external" "drifted")))
    (apply #'moor-e2e-run-action "external"
           (moor-e2e-offered "external" 1 moor-e2e-reaffirm-own))
    (moor-e2e-wait "the reason line in external.md"
                   (lambda () (moor-e2e-reason-line "external")))
    (let ((line (moor-e2e-reason-line "external")))
      (with-current-buffer (moor-e2e-buffer "external")
        (goto-char (moor-e2e-line-start "external" line))
        (search-forward "because:" (line-end-position))
        (delete-horizontal-space)
        (insert " " (gethash "reason" spec) " ")
        ;; The control: with the reason line in, the buffer is unsaved, as it should be.
        (puthash "modified_with_line" (moor-e2e-json-bool (buffer-modified-p)) reasoned))
      (let ((done (apply #'moor-e2e-run-action "external"
                         (moor-e2e-offered "external" line (gethash "written" spec)))))
        (puthash "done" (gethash "result" done) reasoned)
        (puthash "error" (gethash "error" done) reasoned)))
    (puthash "line_gone"
             (moor-e2e-json-bool
              (ignore-errors
                (moor-e2e-wait "the reason line to leave external.md's buffer"
                               (lambda () (not (moor-e2e-reason-line "external"))))
                t))
             reasoned)
    ;; Not a failure at the deadline: the test says what it saw.
    (ignore-errors
      (moor-e2e-wait "external.md's buffer to be as saved"
                     (lambda () (not (buffer-modified-p (moor-e2e-buffer "external"))))))
    (with-current-buffer (moor-e2e-buffer "external")
      (puthash "modified" (moor-e2e-json-bool (buffer-modified-p)) reasoned)
      (puthash "text" (buffer-substring-no-properties (point-min) (point-max)) reasoned))))

(defun moor-e2e-scenario ()
  (dolist (name (moor-e2e-spec "open_at_start"))
    (moor-e2e-open name))
  (moor-e2e-put "client_seconds" (moor-e2e-elapsed))
  (moor-e2e-wait "drifted.md and moved.md diagnostics"
                 (lambda () (and (moor-e2e-has "drifted" "drifted")
                                 (moor-e2e-has "moved" "moved"))))
  (moor-e2e-record "start" '("drifted" "moved" "external"))

  ;; An external change: the file is rewritten behind Emacs's back.
  (let ((coding-system-for-write 'utf-8-unix))
    (write-region (moor-e2e-spec "app_external") nil (moor-e2e-spec "app") nil 'silent))
  (moor-e2e-wait "external.md's drifted diagnostic after src/app.py was rewritten"
                 (lambda () (moor-e2e-has "external" "drifted")))
  (moor-e2e-record "external" '("external"))

  ;; A reaffirm on the command line (as Helix users give the reason): moor.lock changes on disk.
  (let* ((default-directory (file-name-as-directory (moor-e2e-spec "root")))
         (output (generate-new-buffer " *moor reaffirm*"))
         (code (call-process (moor-e2e-spec "moor") nil output nil "reaffirm"
                             (moor-e2e-memory "external") "--why" (moor-e2e-spec "reason")))
         (answer (make-hash-table :test 'equal)))
    (puthash "code" code answer)
    (puthash "output" (with-current-buffer output (buffer-string)) answer)
    (kill-buffer output)
    (moor-e2e-put "cli_reaffirm" answer))
  (moor-e2e-wait "external.md's diagnostics to go after `moor reaffirm' on the command line"
                 (lambda () (moor-e2e-none "external")))
  (moor-e2e-record "cli_reaffirmed" '("external"))

  ;; A reaffirm with a typed reason: the set-up's M-x moor-reaffirm, given what the person
  ;; types at its prompt (batch Emacs reads prompts from stdin).
  (with-current-buffer (moor-e2e-buffer "drifted")
    (let ((answer (make-hash-table :test 'equal)))
      (condition-case err
          (progn
            (puthash "message" (moor-e2e-command #'moor-reaffirm (moor-e2e-spec "reason"))
                     answer)
            (puthash "error" nil answer))
        (error (puthash "message" (error-message-string err) answer)
               (puthash "error" t answer)))
      (moor-e2e-put "reaffirm" answer)))
  (moor-e2e-wait "drifted.md's diagnostics to go after the reaffirm"
                 (lambda () (moor-e2e-none "drifted")))
  (moor-e2e-record "reaffirmed" '("drifted"))

  (moor-e2e-open "late")
  (moor-e2e-wait "late.md's diagnostic (opened after start-up)"
                 (lambda () (moor-e2e-has "late" "drifted")))
  (moor-e2e-record "late" '("late"))

  ;; Every code action offered on late.md (drifted) and moved.md (moved): first those that
  ;; write nothing, then the reaffirm quick fix, then follow.
  (let* ((queue (append (mapcar (lambda (a) (cons "late" a)) (moor-e2e-code-actions "late"))
                        (mapcar (lambda (a) (cons "moved" a)) (moor-e2e-code-actions "moved"))))
         (rank (lambda (item) (pcase (nth 2 item) ("moor.reaffirm" 1) ("moor.follow" 2) (_ 0)))))
    (moor-e2e-put "offered"
                  (vconcat (mapcar (lambda (item)
                                     (let ((o (make-hash-table :test 'equal)))
                                       (puthash "memory" (nth 0 item) o)
                                       (puthash "title" (nth 1 item) o)
                                       (puthash "command" (nth 2 item) o)
                                       o))
                                   queue)))
    (dolist (item (cl-stable-sort queue #'< :key rank))
      (let ((entry (apply #'moor-e2e-run-action item)))
        (pcase (gethash "command" entry)
          ("moor.reaffirm"
           (unless (or (gethash "error" entry) (gethash "quick_reaffirmed" moor-e2e-results))
             (ignore-errors
               (moor-e2e-wait "late.md's diagnostics to go after the quick fix"
                              (lambda () (moor-e2e-none "late"))))
             (moor-e2e-record "quick_reaffirmed" '("late"))))
          ("moor.follow"
           ;; The followed text reaches the buffer (moor writes the file; the set-up's
           ;; auto-revert-mode reloads it), and the buffer is left as saved: unmodified,
           ;; and saving it would not ask about a file changed since it was visited.
           (moor-e2e-wait "the followed reference in moved.md's buffer"
                          (lambda ()
                            (with-current-buffer (moor-e2e-buffer "moved")
                              (save-excursion
                                (goto-char (point-min))
                                (search-forward "\"src/util.py#helper\"" nil t)))))
           (with-current-buffer (moor-e2e-buffer "moved")
             (moor-e2e-put "followed_buffer"
                           (buffer-substring-no-properties (point-min) (point-max)))
             (moor-e2e-put "followed_modified" (moor-e2e-json-bool (buffer-modified-p)))
             (moor-e2e-put "followed_write_warning"
                           (if (verify-visited-file-modtime)
                               ""
                             "the file has changed since it was visited")))
           (ignore-errors
             (moor-e2e-wait "moved.md's diagnostics to go after follow"
                            (lambda () (moor-e2e-none "moved"))))
           (moor-e2e-record "followed" '("moved")))))))
  (moor-e2e-forget)
  (moor-e2e-reaffirm-by-reason-line))

(defun moor-e2e-main ()
  (condition-case err
      (moor-e2e-scenario)
    (moor-e2e-failure (moor-e2e-put "fatal" (cadr err)))
    (error (moor-e2e-put "fatal" (format "%S" err))))
  (moor-e2e-put "seconds" (moor-e2e-elapsed))
  (moor-e2e-put "versions"
                (format "Emacs %s, eglot %s" emacs-version
                        (or (ignore-errors
                              (package-version-join
                               (package-desc-version (cadr (assq 'eglot package-alist)))))
                            "?")))
  (let ((coding-system-for-write 'utf-8-unix)
        (json-encoding-pretty-print nil))
    (write-region (json-encode moor-e2e-results) nil (moor-e2e-spec "results") nil 'silent))
  (when-let ((server (ignore-errors (with-current-buffer (moor-e2e-buffer "drifted")
                                      (eglot-current-server)))))
    (ignore-errors (eglot-shutdown server)))
  (kill-emacs 0))

(moor-e2e-main)

;;; driver.el ends here
