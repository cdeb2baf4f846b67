"""The reference solutions: the single source of every lesson.

Each `lNN_topic.py` is complete and runnable; `m2t make-lessons` cuts the
regions between `# BEGIN SOLUTION` and `# END SOLUTION` to write lessons/.
"""
