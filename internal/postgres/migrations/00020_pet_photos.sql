-- A pet's photos (issue 35): pets.photos holds them in order, as
-- petstore.MarshalPhotos writes them ('' for none), so that a page of pets is still
-- one query; photos files each photo id under its pet, for the sweep of the media
-- store and for deleting a pet's photos.

-- +goose Up
ALTER TABLE pets ADD COLUMN photos text NOT NULL DEFAULT '';
CREATE TABLE photos (
    id     text   PRIMARY KEY,
    pet_id bigint NOT NULL
);
CREATE INDEX photos_pet ON photos (pet_id);

-- +goose Down
DROP TABLE photos;
ALTER TABLE pets DROP COLUMN photos;
